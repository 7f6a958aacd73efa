package restaurant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/internal/storeerr"
)

// apiName is the restaurant API's name.
const apiName = "restaurant"

// API describes the restaurant configuration API to the assemblers
// (servers/stack, `apistack serve`, the test kit, restauranttest).
var API = descriptor.API[Settings, *Server, DemoCredentials]{
	Name: apiName, Files: migrationFiles, New: newFromEnv, Seed: seedTenants,
	Reset: resetTenants, Delete: deleteTenants, Fixture: applyFixture, Copy: copyTenants,
}

// newFromEnv is the restaurant server of an assembler.
func newFromEnv(ctx context.Context, e descriptor.Env, s Settings) (*Server, error) {
	return New(ctx, Config{Deps: e.Deps, Settings: s})
}

// DemoCredentials is the restaurant section of demo-credentials.json.
type DemoCredentials struct {
	BaseURL        string `json:"base_url"`
	ClientID       string `json:"client_id"`
	ClientSecret   string `json:"client_secret"`
	RestaurantGUID string `json:"restaurant_guid"`
}

// The demo set's restaurant has a fixed GUID, so every start finds the same
// one.
const demoRestaurantGUID = "7d3e6a1c-5b2f-4c8e-9a41-2f6b8c0d1e37"

// setRestaurantGUIDs names the GUIDs of the other sets' restaurants: a name
// gives the same GUID on every start.
var setRestaurantGUIDs = uuid.MustParse("0c7a3f52-8e1d-4b6a-9f0e-5d2c1b7a4e93")

// setRestaurant is the GUID and name of the set's restaurant: the demo
// set's is "Demo Bistro".
func setRestaurant(set string) (guid, name string) {
	if set == descriptor.DemoSet {
		guid = demoRestaurantGUID
	} else {
		guid = uuid.NewSHA1(setRestaurantGUIDs, []byte(set)).String()
	}
	return guid, strings.ToUpper(set[:1]) + set[1:] + " Bistro"
}

// seedTenants creates the set's restaurant with a generated configuration of
// set.SampleSize menu items (every resource non-empty) and an API client
// granted it. It is idempotent: an existing configuration is left as it is,
// and credentials from a previous run that still work are kept.
func seedTenants(ctx context.Context, srv *Server, set descriptor.TenantSet, previous *DemoCredentials) (*DemoCredentials, error) {
	s := srv.Operator()
	if set.Name == "" {
		return nil, errors.New("restaurant: a tenant set needs a name")
	}
	guid, name := setRestaurant(set.Name)
	if _, err := s.CreateRestaurant(ctx, guid, name); err != nil && !errors.Is(err, storeerr.ErrAlreadyExists) {
		return nil, err
	}
	counts, err := s.Counts(ctx, guid)
	if err != nil {
		return nil, err
	}
	if counts["menuItems"] == 0 && set.SampleSize > 0 {
		data, err := json.Marshal(Demo(DemoOptions{MenuItems: set.SampleSize, Seed: 1}))
		if err != nil {
			return nil, err
		}
		if _, err := s.Import(ctx, guid, data); err != nil {
			return nil, fmt.Errorf("import the demo configuration: %w", err)
		}
	}
	out := &DemoCredentials{BaseURL: set.URLs[apiName], RestaurantGUID: guid}
	if previous != nil && previous.RestaurantGUID == guid && s.ClientWorks(ctx, previous.ClientID, previous.ClientSecret, guid) {
		out.ClientID, out.ClientSecret = previous.ClientID, previous.ClientSecret
		return out, nil
	}
	c, err := s.CreateClient(ctx, set.Name, []string{guid})
	if err != nil {
		return nil, err
	}
	out.ClientID, out.ClientSecret = c.ClientID, c.ClientSecret
	return out, nil
}
