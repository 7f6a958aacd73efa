// Package pam is the PAM API server: it implements the strict server
// interface generated from specs/pam/openapi.yaml on a SQLite store, with
// bearer tokens issued from service-user keys, roles from group membership,
// keyset pagination linked by RFC 8288 headers and a rate limit per caller.
package pam

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/apistack/apistack/servers/internal/storeerr"
	"log/slog"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/gen/pamserver"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/apistore"
	"github.com/apistack/apistack/servers/internal/cache"
	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/internal/pagetoken"
	"github.com/apistack/apistack/servers/internal/ratelimit"
	"github.com/apistack/apistack/servers/internal/rights"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/validation"
)

// Deps are the dependencies every API's server takes alike.
type Deps = descriptor.Deps

// Config configures the PAM server.
type Config struct {
	// Deps are the dependencies every API takes: DB, Clock, Logger,
	// validation, Hooks, Telemetry.
	Deps
	// Settings are the server's knobs (0: their defaults).
	Settings
	// DisableValidation turns spec validation of requests (and responses)
	// off, to measure what validation costs; handlers still authenticate and
	// authorize every call. Never set it in production: the handlers rely on
	// validated input.
	DisableValidation bool
}

// The credential caches' bounds: entries for the tokens in use, each
// re-read from the database at least once a minute.
const (
	authCacheSize = 10000
	authCacheTTL  = time.Minute
)

// The list-page cache's bounds: the pages read since the last write, at
// most pageCacheSize of them (a page holds at most 1,000 items).
const (
	pageCacheSize = 256
	pageCacheTTL  = time.Minute
)

// Server is the PAM API: Handler serves it, and its exported methods are the
// generated server's handlers. The operator's calls are on Operator(), the
// web console's reads on Console().
type Server struct {
	cfg     Config
	store   *store
	clock   clock.Clock
	limiter *ratelimit.Limiter
	// exchangeFailures counts failed token exchanges per source address and
	// per key id.
	exchangeFailures *ratelimit.Limiter
	cursors          *pagetoken.Codec
	logger           *slog.Logger
	// tokens caches what a bearer token (by hash) resolved to, and roles
	// each user's effective roles; both are dropped on every change that may
	// revoke access (store.revoked), so a request needs no database round
	// trip to authenticate and authorize.
	tokens *cache.Cache[tokenRecord]
	// rendered keeps ListGroups's answers rendered, dropped after every
	// committed write.
	rendered *cache.Cache[renderedPage]
	roles    *cache.Cache[[]string]
	// exchangeKeys caches, by team name and key id, the team and key a
	// token exchange reads (exchangeRecord), dropped like tokens: the key's
	// secret hash, expiry and deletion, its user's status and the team's
	// switch change only through writes that call store.revoked.
	exchangeKeys *cache.Cache[exchangeRecord]
	// offline is the operator's maintenance switch (SetOffline).
	offline atomic.Bool
	// offlineSwitch caches the stored switch on a shared database, where
	// another replica may flip it.
	offlineSwitch *cache.Cache[bool]
}

var _ pamserver.StrictServerInterface = (*Server)(nil)

// New returns a PAM server on cfg.DB.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.DB == nil {
		return nil, errors.New("pam: Config.DB is nil")
	}
	descriptor.ApplyDefaults(&cfg.Settings)
	cfg.Deps = cfg.Deps.WithDefaults()
	db := sqldb.New(cfg.DB, sqldb.Options{SerializeWrites: true})
	// Every cache follows the database: dropped after this replica's
	// commits (OnCommit, store.revoked) and after every commit another
	// replica makes (Follow), and bypassed while this replica cannot hear
	// those.
	st := &store{db: db, pages: apistore.PageCache[any](db, pageCacheSize, pageCacheTTL)}
	cursors, err := apistore.Cursors(ctx, st.db)
	if err != nil {
		return nil, err
	}
	// Rate limits are shared by every replica of a shared database.
	limits := ratelimit.StoreFor(st.db)
	srv := &Server{
		cfg:              cfg,
		store:            st,
		tokens:           cache.New[tokenRecord](authCacheSize, authCacheTTL),
		roles:            cache.New[[]string](authCacheSize, authCacheTTL),
		exchangeKeys:     cache.New[exchangeRecord](authCacheSize, authCacheTTL),
		rendered:         apistore.PageCache[renderedPage](st.db, pageCacheSize, pageCacheTTL),
		offlineSwitch:    cache.New[bool](1, pageCacheTTL),
		clock:            cfg.Clock,
		limiter:          ratelimit.New("requests", cfg.RateLimit, cfg.RateLimitPeriod, cfg.Clock, limits),
		exchangeFailures: ratelimit.New("exchange_failures", cfg.ExchangeFailures, cfg.ExchangeFailurePeriod, cfg.Clock, limits),
		cursors:          cursors,
		logger:           cfg.Logger,
	}
	// The switch is dropped by the write of it (SetOffline), not by every
	// commit of this replica: a request after a create would read it again.
	// Another replica's commit drops a cache only when it changed a table
	// the cache reads (tokenByHash, rolesOf, offline): an issued token, a
	// new key, user or team change no cached token (no cache holds a
	// token's absence), and a new group no one's roles until a member is
	// added to it.
	st.db.FollowTables(srv.tokens,
		sqldb.Dependency{Table: "tokens"}, sqldb.Dependency{Table: "service_keys"},
		sqldb.Dependency{Table: "users"}, sqldb.Dependency{Table: "teams"})
	st.db.FollowTables(srv.roles,
		sqldb.Dependency{Table: "team_groups"}, sqldb.Dependency{Table: "group_members", Inserts: true})
	// The exchange's team and key pairs: only pairs that both exist are
	// cached, so an insert changes none of them.
	st.db.FollowTables(srv.exchangeKeys,
		sqldb.Dependency{Table: "service_keys"}, sqldb.Dependency{Table: "users"}, sqldb.Dependency{Table: "teams"})
	st.db.FollowTables(srv.offlineSwitch, sqldb.Dependency{Table: "settings", Inserts: true})
	st.revoked = func() {
		srv.tokens.Invalidate()
		srv.roles.Invalidate()
		srv.exchangeKeys.Invalidate()
	}
	offline, err := st.offline(ctx)
	if err != nil {
		return nil, err
	}
	srv.offline.Store(offline)
	return srv, nil
}

// Handler returns the HTTP handler of the API: the generated routes behind
// validation, auth and rate limiting, plus /healthz, /openapi.yaml and /docs/.
// Who may call each operation is read from the spec (x-apistack-roles); a
// spec that does not say it for every operation fails here.
func (s *Server) Handler() (http.Handler, error) {
	spec, err := apiserver.Spec("pam", pamserver.GetSpec)
	if err != nil {
		return nil, fmt.Errorf("pam spec: %w", err)
	}
	table, err := rights.FromSpec(spec)
	if err != nil {
		return nil, err
	}
	return s.handlerWith(table)
}

// handlerWith is Handler with the operations authorized by table.
func (s *Server) handlerWith(table *rights.Table) (http.Handler, error) {
	e, err := s.cfg.Echo(apiserver.Config{
		Name:         "pam",
		Title:        "apistack PAM API",
		Validation:   validation.Options{Skip: func(*http.Request) bool { return s.cfg.DisableValidation }},
		ErrorHandler: errorHandler(s.logger),
		Before:       []echo.MiddlewareFunc{s.authAndRateLimit, s.maintenance},
		// requireJSONObject reads the body: only once the caller passed.
		AfterAuth:    []echo.MiddlewareFunc{requireJSONObject},
		MaxBodyBytes: 64 << 10,
	}, pamserver.GetSpec, authenticate)
	if err != nil {
		return nil, err
	}
	pamserver.RegisterHandlers(e, pamserver.NewStrictHandler(s, []pamserver.StrictMiddlewareFunc{s.authorizeOperations(table)}))
	return e, nil
}

// IssueServiceToken exchanges a service-user key for a bearer token.
//
// An unknown team, an unknown key, a wrong secret and a key of another team
// all answer the same 401, so the answers reveal neither which teams nor
// which keys exist; a disabled team is only named to a caller that proved
// it holds one of the team's keys. Each failure is counted against the
// caller's address and the key id named (see exchangeLimits).
func (s *Server) IssueServiceToken(ctx context.Context, req pamserver.IssueServiceTokenRequestObject) (pamserver.IssueServiceTokenResponseObject, error) {
	t, k, err := s.exchangeKey(ctx, req.TeamName, req.Body.KeyId)
	if err != nil {
		return nil, err
	}
	// Compare even when the key is unknown, so every answer takes the same time.
	secretOK := hmac.Equal(hashSecret(req.Body.KeySecret), k.SecretHash) && k.ID != ""
	// The team's time (its sandbox's clock): its tokens expire, and its
	// users' windows pass, in it.
	teamClock := s.cfg.ClockFor(t.Name)
	now := teamClock.Now()
	if !secretOK || t.ID == "" || k.TeamID != t.ID {
		return nil, s.exchangeFailed(ctx, req.Body.KeyId, errAuthentication("unknown key_id or wrong key_secret"))
	}
	apiserver.Attribute(ctx, t.Name)
	switch {
	case k.Deleted:
		return nil, s.exchangeFailed(ctx, req.Body.KeyId, errAuthentication("the key was deleted"))
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		return nil, s.exchangeFailed(ctx, req.Body.KeyId, errAuthentication("the key expired at %s", k.ExpiresAt.UTC().Format(time.RFC3339)))
	case k.UserStatus != "active":
		return nil, s.exchangeFailed(ctx, req.Body.KeyId, errAuthentication("the service user is %s", k.UserStatus))
	case t.Disabled:
		return nil, newError(http.StatusForbidden, pamapi.ErrorNameDisabledTeam, "team %q is disabled", t.Name)
	}
	// A proven key spends from its user's own bucket, like every request the
	// user's tokens make.
	d, err := s.limiter.Take(ratelimit.WithClock(ctx, teamClock), "user:"+k.UserID)
	if err != nil {
		return nil, err
	}
	rh := toRateHeaders(d)
	setRateHeaders(ctx, rh)
	if !d.Allowed {
		return nil, s.tooManyRequests(d)
	}
	token := "pat_" + randomSecret()
	expires := storedTime(now.Add(s.cfg.TokenTTL))
	if k.ExpiresAt != nil && k.ExpiresAt.Before(expires) {
		expires = storedTime(*k.ExpiresAt) // a token never outlives its key
	}
	if err := s.store.insertToken(ctx, hashSecret(token), k, now, expires); err != nil {
		return nil, err
	}
	return pamserver.IssueServiceToken200JSONResponse{
		Body:    pamapi.ServiceToken{BearerToken: token, ExpiresAt: expires.UTC(), TeamName: t.Name},
		Headers: pamserver.IssueServiceToken200ResponseHeaders(rh),
	}, nil
}

// exchangeRecord is what a token exchange reads of its team and key.
type exchangeRecord struct {
	team team
	key  keyRecord
}

// exchangeKey returns the named team and the key of id keyID, each the
// zero value when it does not exist: from the cache when both are there.
// Only a pair that both exist is cached, so a team or key created later is
// found at once.
func (s *Server) exchangeKey(ctx context.Context, teamName, keyID string) (team, keyRecord, error) {
	cacheKey := teamName + "\x00" + keyID
	if rec, ok := s.exchangeKeys.Get(cacheKey); ok {
		return rec.team, rec.key, nil
	}
	gen := s.exchangeKeys.Generation()
	t, err := s.store.teamByName(ctx, teamName)
	if err != nil && !errors.Is(err, storeerr.ErrNotFound) {
		return team{}, keyRecord{}, err
	}
	k, err := s.store.keyByID(ctx, keyID)
	if err != nil && !errors.Is(err, storeerr.ErrNotFound) {
		return team{}, keyRecord{}, err
	}
	if t.ID != "" && k.ID != "" {
		s.exchangeKeys.Put(gen, cacheKey, exchangeRecord{team: t, key: k})
	}
	return t, k, nil
}

// ListGroups lists the team's groups, one keyset page at a time.
func (s *Server) ListGroups(ctx context.Context, req pamserver.ListGroupsRequestObject) (pamserver.ListGroupsResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	f := groupFilter{}
	filters := url.Values{}
	if req.Params.IncludeDeleted != nil && *req.Params.IncludeDeleted {
		f.IncludeDeleted = true
		filters.Set("include_deleted", "true")
	}
	if req.Params.Contains != nil {
		f.Contains = *req.Params.Contains
		addFilter(filters, "contains", req.Params.Contains)
	}
	rh := rateHeadersFrom(ctx)
	// The team's most read list: its pages are kept rendered until the next
	// write. The key holds everything the answer depends on; the caller's
	// access was checked above, on every request.
	key := renderKey(ctx, "groups", p.TeamID, filters, req.Params.Count, req.Params.Offset)
	if page, ok := s.rendered.Get(key); ok {
		return listGroupsAnswer{page: page, rate: rh}, nil
	}
	gen := s.rendered.Generation()
	groups, link, err := paginate(ctx, s, pageRequest{
		list: "groups", teamID: p.TeamID, count: req.Params.Count, offset: req.Params.Offset, filters: filters,
	}, groupKey, func(ctx context.Context, pos *keyset, backwards bool, limit int) ([]group, bool, error) {
		return s.store.listGroups(ctx, p.TeamID, f, pos, backwards, limit)
	})
	if err != nil {
		return nil, err
	}
	list := mapped(groups, toAPIGroup)
	body, err := json.Marshal(pamapi.GroupList{List: list})
	if err != nil {
		return nil, fmt.Errorf("encode groups: %w", err)
	}
	page := renderedPage{body: append(body, '\n'), link: link}
	s.rendered.Put(gen, key, page)
	return listGroupsAnswer{page: page, rate: rh}, nil
}

func groupKey(g group) keyset { return keyset{Name: g.Name, ID: g.ID} }

func toAPIGroup(g group) pamapi.Group {
	roles := mapped(g.Roles, toRole)
	var deleted *time.Time
	if g.DeletedAt != nil {
		d := g.DeletedAt.UTC()
		deleted = &d
	}
	return pamapi.Group{Id: mustUUID(g.ID), Name: g.Name, Roles: roles, DeletedAt: deleted}
}

func mustUUID(id string) uuid.UUID {
	u, err := uuid.Parse(id)
	if err != nil {
		panic(fmt.Sprintf("pam: stored id %q is not a UUID: %v", id, err))
	}
	return u
}

type requestURLKey struct{}

// withRequestURL records the URL the caller used (scheme, host and path), so
// pagination links point where the caller can follow them.
func withRequestURL(r *http.Request) context.Context {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "http" || p == "https" {
		scheme = p
	}
	u := &url.URL{Scheme: scheme, Host: r.Host, Path: r.URL.Path}
	return context.WithValue(r.Context(), requestURLKey{}, u)
}

func requestURL(ctx context.Context) *url.URL {
	if u, ok := ctx.Value(requestURLKey{}).(*url.URL); ok {
		c := *u
		return &c
	}
	return &url.URL{Path: "/"}
}
