// Package restaurant is the restaurant configuration API server: it
// implements the strict server interface generated from
// specs/restaurant/openapi.yaml on an SQLite or PostgreSQL store holding every
// restaurant's configuration, with API-client login, restaurant grants, signed
// keyset page tokens that stay correct while the data changes, and rate limits
// per restaurant. Configuration enters through Import (the admin API) and the
// demo generator (Demo).
package restaurant

import (
	"context"
	"crypto/hmac"
	"errors"
	"fmt"
	"github.com/apistack/apistack/servers/internal/storeerr"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/gen/restaurantapi"
	"github.com/apistack/apistack/gen/restaurantserver"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/apistore"
	"github.com/apistack/apistack/servers/internal/cache"
	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/internal/pagetoken"
	"github.com/apistack/apistack/servers/internal/ratelimit"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/telemetry"
)

// Page sizes of the list operations.
const (
	DefaultPageSize = 100
	MaxPageSize     = 300
)

// Deps are the dependencies every API's server takes alike.
type Deps = descriptor.Deps

// Config configures the restaurant server.
type Config struct {
	// Deps are the dependencies every API takes: DB, Clock, Logger,
	// validation, Hooks, Telemetry.
	Deps
	// Settings are the server's knobs (0: their defaults).
	Settings
}

// Server is the restaurant configuration API: Handler serves it, and its
// exported methods are the generated server's handlers. The operator's calls
// are on Operator(), the web console's reads on Console().
type Server struct {
	cfg      Config
	store    *store
	clock    clock.Clock
	limiters []namedLimiter
	cursors  *pagetoken.Codec
	logger   *slog.Logger
	// dummyHash is compared against when a login names an unknown client, so
	// a wrong client ID and a wrong secret take the same time.
	dummyHash []byte
	// tokens and grants cache what authenticating and admitting a request
	// read (see credentials.go).
	tokens *cache.Cache[tokenEntry]
	grants *cache.Cache[struct{}]
}

var _ restaurantserver.StrictServerInterface = (*Server)(nil)

// New returns a restaurant server on cfg.DB.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.DB == nil {
		return nil, errors.New("restaurant: Config.DB is nil")
	}
	descriptor.ApplyDefaults(&cfg.Settings)
	cfg.Deps = cfg.Deps.WithDefaults()
	if _, err := loadSchemas(); err != nil {
		return nil, fmt.Errorf("restaurant: %w", err)
	}
	db := sqldb.New(cfg.DB, sqldb.Options{SerializeWrites: true})
	// Every cache follows the database: dropped after this replica's
	// commits (OnCommit, the store's revocations) and after every commit
	// another replica makes (Follow), and bypassed while this replica cannot
	// hear those.
	st := &store{db: db, pages: apistore.PageCache[cachedPage](db, pageCacheSize, credentialCacheTTL),
		entities: apistore.PageCache[[]byte](db, entityCacheSize, credentialCacheTTL)}
	cursors, err := apistore.Cursors(ctx, st.db)
	if err != nil {
		return nil, err
	}
	// Rate limits are shared by every replica of a shared database.
	limits := ratelimit.StoreFor(st.db)
	tokens := cache.New[tokenEntry](credentialCacheSize, credentialCacheTTL)
	grants := cache.New[struct{}](credentialCacheSize, credentialCacheTTL)
	// Another replica's commit drops a credential cache only when it
	// changed a table the cache reads (tokenByHash, access): only what was
	// found is cached, so a new token, client, grant or restaurant changes
	// no cached entry; a deletion (a sandbox's reset) does.
	st.db.FollowTables(tokens, sqldb.Dependency{Table: "tokens"}, sqldb.Dependency{Table: "api_clients"})
	st.db.FollowTables(grants, sqldb.Dependency{Table: "client_grants"}, sqldb.Dependency{Table: "restaurants"})
	return &Server{
		cfg:    cfg,
		store:  st,
		tokens: tokens,
		grants: grants,
		clock:  cfg.Clock,
		limiters: []namedLimiter{
			{ratelimit.New("per_second", cfg.RatePerSecond, time.Second, cfg.Clock, limits), time.Second, telemetry.LimitPerSecond},
			{ratelimit.New("per_window", cfg.RatePerWindow, cfg.RateWindow, cfg.Clock, limits), cfg.RateWindow, telemetry.LimitPerWindow},
		},
		cursors:   cursors,
		logger:    cfg.Logger,
		dummyHash: hashSecret(randomSecret()),
	}, nil
}

// Handler returns the HTTP handler of the API: the generated routes behind
// token resolution, validation, the restaurant gate and rate limits, plus
// /healthz, /openapi.yaml and /docs/.
func (s *Server) Handler() (http.Handler, error) {
	e, err := s.cfg.Echo(apiserver.Config{
		Name:         "restaurant",
		Title:        "apistack restaurant configuration API",
		ErrorHandler: errorHandler(s.logger),
		Before:       []echo.MiddlewareFunc{s.resolve},
		MaxBodyBytes: 16 << 10,
	}, restaurantserver.GetSpec, authenticate)
	if err != nil {
		return nil, err
	}
	restaurantserver.RegisterHandlers(e, restaurantserver.NewStrictHandler(s, []restaurantserver.StrictMiddlewareFunc{s.gate}))
	return e, nil
}

// Login exchanges an API client's credentials for a bearer token.
func (s *Server) Login(ctx context.Context, req restaurantserver.LoginRequestObject) (restaurantserver.LoginResponseObject, error) {
	c, err := s.store.client(ctx, req.Body.ClientId)
	if err != nil && !errors.Is(err, storeerr.ErrNotFound) {
		return nil, err
	}
	want := c.SecretHash
	if want == nil {
		want = s.dummyHash
	}
	if !hmac.Equal(hashSecret(req.Body.ClientSecret), want) || c.ID == "" {
		return nil, newError(http.StatusUnauthorized, restaurantapi.ErrorKeyINVALIDCREDENTIALS, "unknown clientId or wrong clientSecret")
	}
	apiserver.Attribute(ctx, c.Name)
	token := "rst_" + randomSecret()
	expires := s.cfg.ClockFor(c.Name).Now().Add(s.cfg.TokenTTL)
	if err := s.store.insertToken(ctx, hashSecret(token), c.ID, expires); err != nil {
		return nil, err
	}
	return restaurantserver.Login200JSONResponse{
		Status: restaurantapi.AuthenticationResponseStatusSUCCESS,
		Token: restaurantapi.AuthenticationToken{
			TokenType:   restaurantapi.AuthenticationTokenTokenTypeBearer,
			AccessToken: token,
			ExpiresIn:   int(s.cfg.TokenTTL / time.Second),
			Scope:       "config:read",
		},
	}, nil
}

// listQuery has the fields of every generated List...Params type, so each
// converts to it.
type listQuery struct {
	PageToken                    *string
	PageSize                     *int
	Page                         *int
	LastModified                 *string
	PlatformRestaurantExternalID string
}

// position is what a page token carries: the insertion sequence of the last
// entity of the page before.
type position struct {
	Seq int64 `json:"s"`
}

func (s *Server) page(ctx context.Context, r resource, q listQuery) ([]entityRow, *string, error) {
	restaurantGUID, kindPath := restaurantFrom(ctx), kinds[r].Path
	pq := pageQuery{Restaurant: restaurantGUID, Kind: kindPath, Limit: DefaultPageSize}
	if q.PageSize != nil {
		pq.Limit = *q.PageSize
	}
	scope := restaurantGUID + "|" + kindPath + "|"
	if q.LastModified != nil {
		t, err := ParseTimestamp(*q.LastModified)
		if err != nil {
			return nil, nil, errParam(restaurantapi.ErrorKeyINVALIDLASTMODIFIED, "lastModified",
				"lastModified must be an instant such as 2015-12-01T00:00:00.000+0000: %v", err)
		}
		ms := t.UnixMilli()
		pq.ModifiedAfterMs = &ms
		scope += fmt.Sprint(ms)
	}
	switch {
	case q.PageToken != nil:
		var pos position
		if err := s.cursors.Decode(scope, *q.PageToken, &pos); err != nil {
			return nil, nil, errParam(restaurantapi.ErrorKeyINVALIDPAGETOKEN, "pageToken",
				"pageToken was not issued by this server for this list, restaurant and lastModified; use the Platform-Next-Page-Token header of the previous page")
		}
		pq.AfterSeq = pos.Seq
	case q.Page != nil:
		pq.Offset = (*q.Page - 1) * pq.Limit
	}
	rows, more, err := s.store.page(ctx, pq)
	if err != nil {
		return nil, nil, err
	}
	if !more || len(rows) == 0 {
		return rows, nil, nil
	}
	token, err := s.cursors.Encode(scope, position{Seq: rows[len(rows)-1].Seq})
	if err != nil {
		return nil, nil, err
	}
	return rows, &token, nil
}

// get answers a single-object operation with the stored document.
func (s *Server) get(ctx context.Context, r resource, guid string) ([]byte, error) {
	doc, err := s.store.entity(ctx, restaurantFrom(ctx), kinds[r].Path, guid)
	if errors.Is(err, storeerr.ErrNotFound) {
		return nil, newError(http.StatusNotFound, restaurantapi.ErrorKeyNOTFOUND,
			"no %s %s in this restaurant's configuration", kinds[r].EntityType, strings.ToLower(guid))
	}
	if err != nil {
		return nil, err
	}
	return doc, nil
}

// GetTipWithholding returns the restaurant's tip withholding setting.
func (s *Server) GetTipWithholding(ctx context.Context, _ restaurantserver.GetTipWithholdingRequestObject) (restaurantserver.GetTipWithholdingResponseObject, error) {
	doc, err := s.store.singleton(ctx, restaurantFrom(ctx), kinds[resTipWithholding].Path)
	if errors.Is(err, storeerr.ErrNotFound) {
		return nil, newError(http.StatusNotFound, restaurantapi.ErrorKeyNOTFOUND, "this restaurant has no tip withholding setting")
	}
	if err != nil {
		return nil, err
	}
	return rawDoc(doc), nil
}

// timestampLayouts are the forms lastModified is accepted in: the service's
// own (2015-12-01T00:00:00.000+0000) and RFC 3339.
var timestampLayouts = []string{
	"2006-01-02T15:04:05.999999999-0700",
	"2006-01-02T15:04:05.999999999Z0700",
	time.RFC3339Nano,
}

// ParseTimestamp parses an instant in the API's format
// (2015-12-01T00:00:00.000+0000) or RFC 3339.
func ParseTimestamp(s string) (time.Time, error) {
	var firstErr error
	for _, layout := range timestampLayouts {
		t, err := time.Parse(layout, s)
		if err == nil {
			return t, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return time.Time{}, fmt.Errorf("parse timestamp %q: %w", s, firstErr)
}

// FormatTimestamp formats t as the API writes instants
// (2015-12-01T00:00:00.000+0000).
func FormatTimestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000-0700")
}
