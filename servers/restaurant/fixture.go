package restaurant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/apistack/apistack/servers/internal/apistore"
	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/internal/sqldb"
)

// applyFixture imports the restaurant section of a sandbox's fixture, an
// import document (Operator.Import), into the set's restaurant: in one
// transaction, refused whole with the pointer of its first problem.
func applyFixture(ctx context.Context, s *Server, set descriptor.TenantSet, creds *DemoCredentials, section json.RawMessage) (json.RawMessage, error) {
	_, err := s.Operator().Import(ctx, creds.RestaurantGUID, section)
	var ie *ImportError
	if errors.As(err, &ie) && len(ie.Problems) > 0 {
		pointer, reason, ok := strings.Cut(ie.Problems[0], ": ")
		if !ok || !strings.HasPrefix(pointer, "/") {
			pointer, reason = "", ie.Problems[0]
		}
		msg := reason
		if ie.Count > 1 {
			msg = fmt.Sprintf("%s (and %d more problems: %s)", reason, ie.Count-1, strings.Join(ie.Problems[1:], "; "))
		}
		return nil, descriptor.Fixturef(pointer, "%s", msg)
	}
	if err != nil {
		return nil, fmt.Errorf("restaurant: fixture of %s: %w", set.Name, err)
	}
	return nil, nil
}

// copyTenants copies the restaurant of set from (its configuration) into
// the restaurant of set to, with a new API client granted it, in one
// transaction; no token is copied.
func copyTenants(ctx context.Context, s *Server, from, to descriptor.TenantSet, creds *DemoCredentials, _ json.RawMessage) (*DemoCredentials, json.RawMessage, error) {
	fromGUID := strings.ToLower(creds.RestaurantGUID)
	guid, name := setRestaurant(to.Name)
	out := &DemoCredentials{BaseURL: to.URLs[apiName], ClientID: uuid.NewString(), ClientSecret: randomSecret(), RestaurantGUID: guid}
	now := sqldb.Micros(s.clock.Now())
	err := s.revokingTx(ctx, func(tx *sqldb.Tx) error {
		return apistore.Run(ctx, tx,
			apistore.Step{Query: `INSERT INTO restaurants (guid, name, created_at) SELECT ?, ?, created_at FROM restaurants WHERE guid = ?`,
				Args: []any{guid, name, fromGUID}},
			apistore.Step{Query: `INSERT INTO entities (restaurant_guid, kind, guid, external_id, doc, created_at, modified_at, archived, removed)
				SELECT ?, kind, guid, external_id, doc, created_at, modified_at, archived, removed FROM entities WHERE restaurant_guid = ? ORDER BY seq`,
				Args: []any{guid, fromGUID}},
			apistore.Step{Query: `INSERT INTO api_clients (id, name, secret_hash, created_at) VALUES (?, ?, ?, ?)`,
				Args: []any{out.ClientID, to.Name, hashSecret(out.ClientSecret), now}},
			apistore.Step{Query: `INSERT INTO client_grants (client_id, restaurant_guid) VALUES (?, ?)`, Args: []any{out.ClientID, guid}})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("restaurant: copy %s to %s: %w", from.Name, to.Name, err)
	}
	return out, nil, nil
}
