package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/apistack/apistack/gen/adminapi"
)

// pamAdminCommand runs the PAM commands of `apistack admin` added after the
// team and service-user ones: human users, quotas and maintenance mode.
func pamAdminCommand(ctx context.Context, client *adminapi.ClientWithResponses, cmd string, args []string, stderr io.Writer) (int, []byte, error) {
	switch cmd {
	case "create-user":
		if len(args) != 2 {
			return 0, nil, errors.New("usage: create-user TEAM NAME")
		}
		r, err := client.CreatePAMHumanUserWithResponse(ctx, args[0], adminapi.CreatePAMHumanUserRequest{Name: args[1]})
		if err != nil {
			return 0, nil, err
		}
		return r.StatusCode(), r.Body, nil
	case "quotas":
		sub := flag.NewFlagSet(cmd, flag.ContinueOnError)
		sub.SetOutput(stderr)
		groups := sub.Int("groups", -1, "most live groups (-1: leave as is)")
		users := sub.Int("service-users", -1, "most service users (-1: leave as is)")
		keys := sub.Int("keys-per-service-user", -1, "most live keys per service user (-1: leave as is)")
		if err := sub.Parse(args); err != nil {
			return 0, nil, err
		}
		if sub.NArg() != 1 {
			return 0, nil, errors.New("usage: quotas [--groups N] [--service-users N] [--keys-per-service-user N] TEAM")
		}
		team := sub.Arg(0)
		if *groups < 0 && *users < 0 && *keys < 0 {
			r, err := client.GetPAMQuotasWithResponse(ctx, team)
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), r.Body, nil
		}
		body := adminapi.PAMQuotas{}
		for _, q := range []struct {
			v   int
			dst **int
		}{{*groups, &body.Groups}, {*users, &body.ServiceUsers}, {*keys, &body.KeysPerServiceUser}} {
			if q.v >= 0 {
				v := q.v
				*q.dst = &v
			}
		}
		r, err := client.SetPAMQuotasWithResponse(ctx, team, body)
		if err != nil {
			return 0, nil, err
		}
		return r.StatusCode(), r.Body, nil
	case "maintenance":
		if len(args) > 1 {
			return 0, nil, errors.New("usage: maintenance [on|off]")
		}
		if len(args) == 0 {
			r, err := client.GetPAMMaintenanceWithResponse(ctx)
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), r.Body, nil
		}
		if args[0] != "on" && args[0] != "off" {
			return 0, nil, errors.New("usage: maintenance [on|off]")
		}
		r, err := client.SetPAMMaintenanceWithResponse(ctx, adminapi.PAMMaintenance{Offline: args[0] == "on"})
		if err != nil {
			return 0, nil, err
		}
		return r.StatusCode(), r.Body, nil
	}
	return 0, nil, fmt.Errorf("unknown PAM command %q", cmd)
}

// restaurantAdminCommand runs the restaurant commands of `apistack admin`.
func restaurantAdminCommand(ctx context.Context, client *adminapi.ClientWithResponses, cmd string, args []string) (int, []byte, error) {
	switch cmd {
	case "restaurant-create":
		if len(args) < 1 || len(args) > 2 {
			return 0, nil, errors.New("usage: restaurant-create NAME [GUID]")
		}
		req := adminapi.RestaurantCreateRequest{Name: args[0]}
		if len(args) == 2 {
			req.Guid = &args[1]
		}
		r, err := client.CreateRestaurantWithResponse(ctx, req)
		if err != nil {
			return 0, nil, err
		}
		return r.StatusCode(), r.Body, nil
	case "restaurant-get":
		if len(args) != 1 {
			return 0, nil, errors.New("usage: restaurant-get GUID")
		}
		r, err := client.GetRestaurantWithResponse(ctx, args[0])
		if err != nil {
			return 0, nil, err
		}
		return r.StatusCode(), r.Body, nil
	case "restaurant-create-client":
		if len(args) != 2 {
			return 0, nil, errors.New("usage: restaurant-create-client NAME GUID[,GUID...]")
		}
		r, err := client.CreateRestaurantClientWithResponse(ctx, adminapi.RestaurantCreateClientRequest{
			Name: args[0], Restaurants: strings.Split(args[1], ","),
		})
		if err != nil {
			return 0, nil, err
		}
		return r.StatusCode(), r.Body, nil
	case "restaurant-import":
		if len(args) != 2 {
			return 0, nil, errors.New("usage: restaurant-import GUID FILE.json")
		}
		doc, err := os.ReadFile(args[1])
		if err != nil {
			return 0, nil, err
		}
		r, err := client.ImportRestaurantConfigurationWithBodyWithResponse(ctx, args[0], "application/json", bytes.NewReader(doc))
		if err != nil {
			return 0, nil, err
		}
		return r.StatusCode(), r.Body, nil
	case "restaurant-demo":
		if len(args) != 2 {
			return 0, nil, errors.New("usage: restaurant-demo GUID MENU_ITEMS")
		}
		n, err := strconv.Atoi(args[1])
		if err != nil {
			return 0, nil, fmt.Errorf("MENU_ITEMS: %w", err)
		}
		r, err := client.GenerateRestaurantDemoWithResponse(ctx, args[0], adminapi.RestaurantDemoRequest{MenuItems: n})
		if err != nil {
			return 0, nil, err
		}
		return r.StatusCode(), r.Body, nil
	case "restaurant-archive", "restaurant-remove":
		if len(args) != 3 {
			return 0, nil, fmt.Errorf("usage: %s GUID RESOURCE ENTITY_GUID", cmd)
		}
		resource := adminapi.RestaurantResource(args[1])
		if cmd == "restaurant-archive" {
			r, err := client.ArchiveRestaurantEntityWithResponse(ctx, args[0], resource, args[2])
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), r.Body, nil
		}
		r, err := client.RemoveRestaurantEntityWithResponse(ctx, args[0], resource, args[2])
		if err != nil {
			return 0, nil, err
		}
		return r.StatusCode(), r.Body, nil
	}
	return 0, nil, fmt.Errorf("unknown restaurant command %q", cmd)
}
