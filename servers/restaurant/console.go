package restaurant

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/apistack/apistack/servers/internal/apistore"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/storeerr"
)

// The web console's view of the restaurant service (servers/console):
// restaurants, API clients (never their secrets) and any resource list,
// paged as the API pages it.

// ConsoleClient is an API client without its secret.
type ConsoleClient struct {
	ID, Name    string
	CreatedAt   time.Time
	Restaurants []string
}

// Console is what the web console (servers/console) reads of a restaurant
// server, and the imports it makes. Server.Console gives a server's.
type Console Server

// Console is the console's view of s.
func (s *Server) Console() *Console { return (*Console)(s) }

// Restaurants lists every restaurant, by name.
func (s *Console) Restaurants(ctx context.Context) ([]Restaurant, error) {
	out, err := apistore.Collect(ctx, s.store.db, func(rows *sql.Rows, r *Restaurant) error {
		return rows.Scan(&r.GUID, &r.Name, sqldb.TimeInto(&r.CreatedAt))
	}, `SELECT guid, name, created_at FROM restaurants ORDER BY name, guid`)
	if err != nil {
		return nil, fmt.Errorf("console restaurants: %w", err)
	}
	return out, nil
}

// Clients lists every API client with the restaurants it is granted.
func (s *Console) Clients(ctx context.Context) ([]ConsoleClient, error) {
	// One row per grant (one without a grant for a client that has none),
	// by client.
	grants, err := apistore.Collect(ctx, s.store.db, func(rows *sql.Rows, g *ConsoleClient) error {
		g.Restaurants = make([]string, 1)
		return rows.Scan(&g.ID, &g.Name, sqldb.TimeInto(&g.CreatedAt), &g.Restaurants[0])
	}, `SELECT c.id, c.name, c.created_at, COALESCE(g.restaurant_guid, '')
		FROM api_clients c LEFT JOIN client_grants g ON g.client_id = c.id ORDER BY c.name, c.id, g.restaurant_guid`)
	if err != nil {
		return nil, fmt.Errorf("console clients: %w", err)
	}
	var out []ConsoleClient
	for _, g := range grants {
		if n := len(out); n == 0 || out[n-1].ID != g.ID {
			out = append(out, ConsoleClient{ID: g.ID, Name: g.Name, CreatedAt: g.CreatedAt})
		}
		if grant := g.Restaurants[0]; grant != "" {
			last := &out[len(out)-1]
			last.Restaurants = append(last.Restaurants, grant)
		}
	}
	return out, nil
}

// Page returns one page of a restaurant's resource list exactly as
// the API pages it: pageSize entities (0: the API's default) after the
// position pageToken carries ("" for the first page), and the token of the
// next page ("" on the last). storeerr.ErrNotFound for an unknown resource or
// restaurant; a token that is not one of this list's is an error.
func (s *Console) Page(ctx context.Context, restaurantGUID, resource, pageToken string, pageSize int) ([]json.RawMessage, string, error) {
	r, ok := resourceByPath[resource]
	if !ok || kinds[r].Single {
		return nil, "", fmt.Errorf("resource %q: %w", resource, storeerr.ErrNotFound)
	}
	guid := strings.ToLower(restaurantGUID)
	if _, err := s.store.restaurant(ctx, guid); err != nil {
		return nil, "", err
	}
	q := listQuery{}
	if pageToken != "" {
		q.PageToken = &pageToken
	}
	if pageSize > 0 {
		q.PageSize = &pageSize
	}
	rows, next, err := (*Server)(s).page(context.WithValue(ctx, restaurantKey{}, guid), r, q)
	if err != nil {
		return nil, "", fmt.Errorf("page of %s: %w", resource, err)
	}
	out := make([]json.RawMessage, len(rows))
	for i, r := range rows {
		out[i] = json.RawMessage(r.Doc)
	}
	token := ""
	if next != nil {
		token = *next
	}
	return out, token, nil
}

// GenerateDemo imports into the restaurant the demo configuration of
// menuItems menu items built from seed (Demo), as an operator's import
// would: the result, or an *ImportError with the problems found.
func (s *Console) GenerateDemo(ctx context.Context, restaurantGUID string, menuItems int, seed uint64) (ImportResult, error) {
	doc, err := json.Marshal(Demo(DemoOptions{MenuItems: menuItems, Seed: seed}))
	if err != nil {
		return ImportResult{}, fmt.Errorf("demo document: %w", err)
	}
	return s.Import(ctx, restaurantGUID, doc)
}

// Import is Operator.Import: the console's import of a configuration
// document.
func (s *Console) Import(ctx context.Context, restaurantGUID string, document []byte) (ImportResult, error) {
	return (*Operator)(s).Import(ctx, restaurantGUID, document)
}
