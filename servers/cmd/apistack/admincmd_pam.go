package main

import (
	"context"
	"flag"
	"net/http"
	"strings"

	"github.com/apistack/apistack/gen/adminapi"
)

// pamAdminCommands are the PAM commands of `apistack admin`. Their
// unprefixed names of earlier releases are aliases.
var pamAdminCommands = []adminCmd{
	{name: "pam-create-team", aliases: []string{"create-team"}, args: "NAME", help: "create a PAM team", minArgs: 1, maxArgs: 1,
		run: noFlags(func(ctx context.Context, c adminapi.ClientInterface, a []string) (*http.Response, error) {
			return c.CreatePAMTeam(ctx, adminapi.CreatePAMTeamJSONRequestBody{Name: a[0]})
		})},
	{name: "pam-get-team", aliases: []string{"get-team"}, args: "NAME", help: "show a PAM team", minArgs: 1, maxArgs: 1,
		run: noFlags(func(ctx context.Context, c adminapi.ClientInterface, a []string) (*http.Response, error) {
			return c.GetPAMTeam(ctx, a[0])
		})},
	{name: "pam-disable-team", aliases: []string{"disable-team"}, args: "NAME", help: "disable a PAM team", minArgs: 1, maxArgs: 1,
		run: noFlags(setTeamDisabled(true))},
	{name: "pam-enable-team", aliases: []string{"enable-team"}, args: "NAME", help: "enable a PAM team", minArgs: 1, maxArgs: 1,
		run: noFlags(setTeamDisabled(false))},
	{name: "pam-create-service-user", aliases: []string{"create-service-user"}, args: "[--key-expires D] TEAM USER GROUP [ROLE,ROLE...]",
		help: "create a PAM service user with one key in GROUP", minArgs: 3, maxArgs: 4,
		run: func(fs *flag.FlagSet) adminCall {
			expires := fs.Duration("key-expires", 0, "key lifetime (0: never expires)")
			return func(ctx context.Context, c adminapi.ClientInterface, a []string) (*http.Response, error) {
				req := adminapi.BootstrapPAMServiceUserJSONRequestBody{Name: a[1], Group: a[2], Roles: []adminapi.PAMRole{}}
				if len(a) == 4 && a[3] != "" {
					for _, r := range strings.Split(a[3], ",") {
						req.Roles = append(req.Roles, adminapi.PAMRole(strings.TrimSpace(r)))
					}
				}
				if *expires > 0 {
					secs := int(expires.Seconds())
					req.KeyExpiresInSeconds = &secs
				}
				return c.BootstrapPAMServiceUser(ctx, a[0], req)
			}
		}},
	{name: "pam-create-user", aliases: []string{"create-user"}, args: "TEAM NAME", help: "create a PAM human user (end_user implicitly)", minArgs: 2, maxArgs: 2,
		run: noFlags(func(ctx context.Context, c adminapi.ClientInterface, a []string) (*http.Response, error) {
			return c.CreatePAMHumanUser(ctx, a[0], adminapi.CreatePAMHumanUserRequest{Name: a[1]})
		})},
	{name: "pam-quotas", aliases: []string{"quotas"}, args: "[--groups N] [--service-users N] [--keys-per-service-user N] TEAM",
		help: "show a PAM team's quotas, or set them", minArgs: 1, maxArgs: 1,
		run: func(fs *flag.FlagSet) adminCall {
			groups := fs.Int("groups", -1, "most live groups (-1: leave as is)")
			users := fs.Int("service-users", -1, "most service users (-1: leave as is)")
			keys := fs.Int("keys-per-service-user", -1, "most live keys per service user (-1: leave as is)")
			return func(ctx context.Context, c adminapi.ClientInterface, a []string) (*http.Response, error) {
				if *groups < 0 && *users < 0 && *keys < 0 {
					return c.GetPAMQuotas(ctx, a[0])
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
				return c.SetPAMQuotas(ctx, a[0], body)
			}
		}},
	{name: "pam-maintenance", aliases: []string{"maintenance"}, args: "[on|off]", help: "show or switch PAM maintenance mode (503 service_offline)", minArgs: 0, maxArgs: 1,
		run: noFlags(func(ctx context.Context, c adminapi.ClientInterface, a []string) (*http.Response, error) {
			if len(a) == 0 {
				return c.GetPAMMaintenance(ctx)
			}
			if a[0] != "on" && a[0] != "off" {
				return nil, errUsage("pam-maintenance [on|off]")
			}
			return c.SetPAMMaintenance(ctx, adminapi.PAMMaintenance{Offline: a[0] == "on"})
		})},
}

// setTeamDisabled is the call of pam-disable-team and pam-enable-team.
func setTeamDisabled(disabled bool) adminCall {
	return func(ctx context.Context, c adminapi.ClientInterface, a []string) (*http.Response, error) {
		return c.UpdatePAMTeam(ctx, a[0], adminapi.UpdatePAMTeamJSONRequestBody{Disabled: &disabled})
	}
}
