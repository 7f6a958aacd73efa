package restaurant

import (
	"context"
	"crypto/hmac"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/apistack/apistack/servers/internal/storeerr"
)

// Operator is the operator's side of a restaurant server, beside its API:
// the calls the admin API, the demo seed and the test kit make. They bypass
// tokens and grants: the admin API guards them with its own token.
// Server.Operator gives a server's.
type Operator Server

// Operator is the operator's side of s.
func (s *Server) Operator() *Operator { return (*Operator)(s) }

// Restaurant is a tenant of the configuration API.
type Restaurant struct {
	GUID      string
	Name      string
	CreatedAt time.Time
}

// ClientCredentials is an API client with its secret. ClientSecret is only
// ever known here; the store keeps its hash.
type ClientCredentials struct {
	ClientID     string
	ClientSecret string
	Name         string
	Restaurants  []string
}

// CreateRestaurant creates a restaurant with the given GUID (a new one when
// guid is empty); storeerr.ErrAlreadyExists when the GUID is taken.
func (s *Operator) CreateRestaurant(ctx context.Context, guid, name string) (Restaurant, error) {
	if guid == "" {
		guid = uuid.NewString()
	}
	u, err := uuid.Parse(guid)
	if err != nil {
		return Restaurant{}, fmt.Errorf("restaurant GUID %q: %w", guid, err)
	}
	r, err := s.store.createRestaurant(ctx, u.String(), name, s.clock.Now())
	return Restaurant(r), err
}

// Restaurant returns a restaurant; storeerr.ErrNotFound when there is none.
func (s *Operator) Restaurant(ctx context.Context, guid string) (Restaurant, error) {
	r, err := s.store.restaurant(ctx, strings.ToLower(guid))
	return Restaurant(r), err
}

// CreateClient creates an API client granted the given restaurants;
// storeerr.ErrNotFound when one of them does not exist.
func (s *Operator) CreateClient(ctx context.Context, name string, restaurants []string) (ClientCredentials, error) {
	grants := make([]string, 0, len(restaurants))
	for _, r := range restaurants {
		grants = append(grants, strings.ToLower(r))
	}
	slices.Sort(grants)
	grants = slices.Compact(grants)
	c := ClientCredentials{ClientID: uuid.NewString(), ClientSecret: randomSecret(), Name: name, Restaurants: grants}
	if err := s.store.createClient(ctx, c.ClientID, name, hashSecret(c.ClientSecret), grants, s.clock.Now()); err != nil {
		return ClientCredentials{}, err
	}
	return c, nil
}

// ClientWorks reports whether clientID/secret would log in now and is granted
// restaurantGUID.
func (s *Operator) ClientWorks(ctx context.Context, clientID, secret, restaurantGUID string) bool {
	c, err := s.store.client(ctx, clientID)
	if err != nil || !hmac.Equal(hashSecret(secret), c.SecretHash) {
		return false
	}
	return slices.Contains(c.Restaurants, strings.ToLower(restaurantGUID))
}

// Archive hides one entity of a restaurant's configuration, as the
// restaurant's staff archiving it would; storeerr.ErrNotFound when it is not stored.
func (s *Operator) Archive(ctx context.Context, restaurantGUID, resource, guid string) error {
	if kindByPath[resource] == nil {
		return fmt.Errorf("resource %q: %w", resource, storeerr.ErrNotFound)
	}
	return s.store.setHidden(ctx, strings.ToLower(restaurantGUID), resource, guid, false, s.clock.Now())
}

// Remove removes one entity from a restaurant's configuration; storeerr.ErrNotFound
// when it is not stored.
func (s *Operator) Remove(ctx context.Context, restaurantGUID, resource, guid string) error {
	if kindByPath[resource] == nil {
		return fmt.Errorf("resource %q: %w", resource, storeerr.ErrNotFound)
	}
	return s.store.setHidden(ctx, strings.ToLower(restaurantGUID), resource, guid, true, s.clock.Now())
}

// Counts returns the number of live entities per resource of a restaurant.
func (s *Operator) Counts(ctx context.Context, restaurantGUID string) (map[string]int, error) {
	return s.store.counts(ctx, strings.ToLower(restaurantGUID))
}
