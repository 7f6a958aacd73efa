package restaurant

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"strings"
	"time"
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
	rows, err := s.store.db.QueryContext(ctx, `SELECT guid, name, created_at FROM restaurants ORDER BY name, guid`)
	if err != nil {
		return nil, fmt.Errorf("console restaurants: %w", err)
	}
	defer rows.Close()
	var out []Restaurant
	for rows.Next() {
		var r Restaurant
		var created int64
		if err := rows.Scan(&r.GUID, &r.Name, &created); err != nil {
			return nil, fmt.Errorf("console restaurants: %w", err)
		}
		r.CreatedAt = sqldb.Time(created)
		out = append(out, r)
	}
	return out, rows.Err()
}

// Clients lists every API client with the restaurants it is granted.
func (s *Console) Clients(ctx context.Context) ([]ConsoleClient, error) {
	rows, err := s.store.db.QueryContext(ctx, `SELECT c.id, c.name, c.created_at, COALESCE(g.restaurant_guid, '')
		FROM api_clients c LEFT JOIN client_grants g ON g.client_id = c.id ORDER BY c.name, c.id, g.restaurant_guid`)
	if err != nil {
		return nil, fmt.Errorf("console clients: %w", err)
	}
	defer rows.Close()
	var out []ConsoleClient
	for rows.Next() {
		var c ConsoleClient
		var created int64
		var grant string
		if err := rows.Scan(&c.ID, &c.Name, &created, &grant); err != nil {
			return nil, fmt.Errorf("console clients: %w", err)
		}
		if n := len(out); n == 0 || out[n-1].ID != c.ID {
			c.CreatedAt = sqldb.Time(created)
			out = append(out, c)
		}
		if grant != "" {
			last := &out[len(out)-1]
			last.Restaurants = append(last.Restaurants, grant)
		}
	}
	return out, rows.Err()
}

// Page returns one page of a restaurant's resource list exactly as
// the API pages it: pageSize entities (0: the API's default) after the
// position pageToken carries ("" for the first page), and the token of the
// next page ("" on the last). ErrNotFound for an unknown resource or
// restaurant; a token that is not one of this list's is an error.
func (s *Console) Page(ctx context.Context, restaurantGUID, resource, pageToken string, pageSize int) ([]json.RawMessage, string, error) {
	r, ok := resourceByPath[resource]
	if !ok || kinds[r].Single {
		return nil, "", fmt.Errorf("resource %q: %w", resource, ErrNotFound)
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
