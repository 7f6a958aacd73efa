package pam

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"github.com/apistack/apistack/servers/internal/storeerr"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/gen/pamserver"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/ratelimit"
	"github.com/apistack/apistack/servers/internal/rights"
	"github.com/apistack/apistack/servers/internal/telemetry"
)

// principal is the caller a valid bearer token stands for.
type principal struct {
	UserID       string
	UserName     string
	UserKind     string
	TeamID       string
	TeamName     string
	TeamDisabled bool
	KeyID        string
}

// authState is what the auth middleware learned about a request's token; the
// spec's security check (authenticate) and the handlers read it from the
// request context, so the token is looked up once per request.
type authState struct {
	principal *principal
	err       *apiError
	// admitted is set by the authorization (admit) once the principal may
	// call the request's operation.
	admitted bool
}

type authStateKey struct{}

func authFrom(ctx context.Context) *authState {
	st, _ := ctx.Value(authStateKey{}).(*authState)
	if st == nil {
		return &authState{err: errAuthentication("an Authorization: Bearer token is required")}
	}
	return st
}

// resolveAuth looks up the bearer token, if any, and records the outcome. It
// refuses nothing itself: whether an operation needs a token is the spec's
// business (authenticate, below).
func (s *Server) resolveAuth(r *http.Request) *authState {
	h := r.Header.Get("Authorization")
	if h == "" {
		return &authState{err: errAuthentication("an Authorization: Bearer token is required")}
	}
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" || strings.ContainsAny(strings.TrimSpace(token), " \t") {
		return &authState{err: errAuthentication("the Authorization header must be \"Bearer <token>\"")}
	}
	rec, err := s.token(r.Context(), hashSecret(strings.TrimSpace(token)))
	switch {
	case errors.Is(err, storeerr.ErrNotFound):
		return &authState{err: errAuthentication("the bearer token is not valid; obtain a new one")}
	case err != nil:
		// A caller gone away becomes client_closed_connection; anything else
		// unknown_error, its detail logged by the error handler.
		return &authState{err: lookupError(err)}
	case !s.cfg.ClockFor(rec.TeamName).Now().Before(rec.ExpiresAt):
		return &authState{err: errAuthentication("the bearer token expired at %s; obtain a new one", rec.ExpiresAt.UTC().Format("2006-01-02T15:04:05Z"))}
	case rec.KeyDeleted:
		return &authState{err: errAuthorization("the key that issued this token was deleted; authenticate with a live key")}
	case rec.Revoked:
		return &authState{err: errAuthorization("this token was revoked when its user was disabled; obtain a new one")}
	case rec.UserStatus != "active":
		return &authState{err: errAuthorization("the user of this token is %s; its access has ended", rec.UserStatus)}
	}
	return &authState{principal: &principal{
		UserID: rec.UserID, UserName: rec.UserName, UserKind: rec.UserKind,
		TeamID: rec.TeamID, TeamName: rec.TeamName, TeamDisabled: rec.TeamDisabled, KeyID: rec.KeyID,
	}}
}

// authenticate is the spec's check of the bearerAuth scheme: it passes when
// the request's token resolved to a principal.
func authenticate(ctx context.Context, in *openapi3filter.AuthenticationInput) error {
	if in.SecuritySchemeName != "bearerAuth" {
		return fmt.Errorf("unknown security scheme %q", in.SecuritySchemeName)
	}
	st := authFrom(ctx)
	if st.principal == nil {
		return st.err
	}
	return nil
}

// authAndRateLimit resolves the caller, spends one request of its bucket and
// puts the four X-RateLimit-* headers on the response, so every answer,
// errors and 429 included, carries them. Success responses repeat them in
// their typed headers (rateHeaders), since the generated responses set every
// declared header.
//
// The bucket is the authenticated principal's; a request without a valid
// token spends from its source address's bucket, so nobody can use up a
// team's or a user's allowance without its credentials. The token exchange
// is limited apart (exchange).
func (s *Server) authAndRateLimit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if isTokenExchange(req) {
			return s.exchange(c, next)
		}
		st := s.resolveAuth(req)
		key, takeCtx := "source:"+sourceAddress(req), req.Context()
		if st.principal != nil {
			// A user's window passes in its team's time.
			key, takeCtx = "user:"+st.principal.UserID, ratelimit.WithClock(takeCtx, s.cfg.ClockFor(st.principal.TeamName))
		}
		d, err := s.limiter.Take(takeCtx, key)
		if err != nil {
			setRateHeadersOn(c.Response().Header(), unknownRate(s.cfg.RateLimit, s.cfg.RateLimitPeriod, s.clock.Now()))
			return err
		}
		if st.principal != nil {
			apiserver.Attribute(req.Context(), st.principal.TeamName)
		}
		rh := toRateHeaders(d)
		ctx := context.WithValue(withRequestURL(req), authStateKey{}, st)
		ctx = context.WithValue(ctx, responseHeaderKey{}, c.Response().Header())
		c.SetRequest(req.WithContext(context.WithValue(ctx, rateHeadersKey{}, rh)))
		setRateHeaders(c.Request().Context(), rh)
		if !d.Allowed {
			s.cfg.Telemetry.RateLimited("pam", telemetry.LimitPrincipal)
			return s.tooManyRequests(d)
		}
		return next(c)
	}
}

// exchange admits a token exchange. An exchange spends nothing up front:
// a proven key spends from its user's bucket (IssueServiceToken), and each
// failure is counted twice, against the caller's source address and against
// the key id it named (exchangeFailed). A source over its failures is
// refused before its request is read, whatever it sends; a key id over its
// failures turns further wrong secrets for it into 429, while its real
// secret still works. So a flood of bogus exchanges locks out only its own
// source: a valid key presented from elsewhere still gets its token.
func (s *Server) exchange(c echo.Context, next echo.HandlerFunc) error {
	req := c.Request()
	src := "source:" + sourceAddress(req)
	d, err := s.exchangeFailures.Peek(req.Context(), src)
	if err != nil {
		setRateHeadersOn(c.Response().Header(), unknownRate(s.cfg.ExchangeFailures, s.cfg.ExchangeFailurePeriod, s.clock.Now()))
		return err
	}
	ctx := context.WithValue(withRequestURL(req), exchangeSourceKey{}, src)
	ctx = context.WithValue(ctx, responseHeaderKey{}, c.Response().Header())
	ctx = context.WithValue(ctx, authStateKey{}, &authState{err: errAuthentication("an Authorization: Bearer token is required")})
	c.SetRequest(req.WithContext(ctx))
	setRateHeaders(ctx, toRateHeaders(d))
	if !d.Allowed {
		s.cfg.Telemetry.RateLimited("pam", telemetry.LimitExchangeSource)
		return newError(http.StatusTooManyRequests, pamapi.ErrorNameTooManyRequests,
			"too many failed token exchanges from this address (%d per %s); retry at %s plus a random delay",
			d.Limit, s.cfg.ExchangeFailurePeriod, d.RetryAt.UTC().Format("2006-01-02T15:04:05Z"))
	}
	return next(c)
}

// exchangeFailed counts a failed token exchange against its source and the
// key id it named, puts the source's headers on the answer, and returns err,
// or a 429 when the key id has failed too often already.
func (s *Server) exchangeFailed(ctx context.Context, keyID string, err *apiError) error {
	src, _ := ctx.Value(exchangeSourceKey{}).(string)
	d, takeErr := s.exchangeFailures.Take(ctx, src)
	if takeErr != nil {
		setRateHeaders(ctx, unknownRate(s.cfg.ExchangeFailures, s.cfg.ExchangeFailurePeriod, s.clock.Now()))
		return takeErr
	}
	setRateHeaders(ctx, toRateHeaders(d))
	kd, takeErr := s.exchangeFailures.Take(ctx, "key:"+keyID)
	if takeErr != nil {
		return takeErr
	}
	if !kd.Allowed {
		s.cfg.Telemetry.RateLimited("pam", telemetry.LimitExchangeKey)
		return newError(http.StatusTooManyRequests, pamapi.ErrorNameTooManyRequests,
			"too many failed token exchanges for this key_id (%d per %s); retry at %s plus a random delay",
			kd.Limit, s.cfg.ExchangeFailurePeriod, kd.RetryAt.UTC().Format("2006-01-02T15:04:05Z"))
	}
	return err
}

// tooManyRequests is the 429 of a spent bucket.
func (s *Server) tooManyRequests(d ratelimit.Decision) error {
	return newError(http.StatusTooManyRequests, pamapi.ErrorNameTooManyRequests,
		"the rate limit of %d requests per %s is used up; retry at %s plus a random delay",
		d.Limit, s.cfg.RateLimitPeriod, d.RetryAt.UTC().Format("2006-01-02T15:04:05Z"))
}

type (
	exchangeSourceKey struct{}
	responseHeaderKey struct{}
)

// setRateHeaders puts the four X-RateLimit-* headers on the response of the
// request in ctx (before it is written).
func setRateHeaders(ctx context.Context, rh rateHeaders) {
	h, _ := ctx.Value(responseHeaderKey{}).(http.Header)
	if h == nil {
		return
	}
	setRateHeadersOn(h, rh)
}

// setRateHeadersOn puts the four X-RateLimit-* headers in h.
func setRateHeadersOn(h http.Header, rh rateHeaders) {
	setIntHeader(h, rateHeaderNames[0], rh.XRateLimitLimit)
	setIntHeader(h, rateHeaderNames[1], rh.XRateLimitRemaining)
	setIntHeader(h, rateHeaderNames[2], rh.XRateLimitReset)
	setIntHeader(h, rateHeaderNames[3], rh.XRateLimitRetryAt)
}

// rateHeaderNames are the X-RateLimit-* header names in the canonical form
// net/http keeps them in: set under it, a name is not canonicalized anew on
// every answer.
var rateHeaderNames = [4]string{
	http.CanonicalHeaderKey("X-RateLimit-Limit"),
	http.CanonicalHeaderKey("X-RateLimit-Remaining"),
	http.CanonicalHeaderKey("X-RateLimit-Reset"),
	http.CanonicalHeaderKey("X-RateLimit-Retry-At"),
}

// setIntHeader sets the header key (canonical) of h to v in decimal, as
// h.Set does; a value already set so (the middleware's, repeated by the
// answer) is left as it is.
func setIntHeader(h http.Header, key string, v int64) {
	var buf [24]byte
	digits := strconv.AppendInt(buf[:0], v, 10)
	if cur := h[key]; len(cur) == 1 && cur[0] == string(digits) {
		return
	}
	h[key] = []string{string(digits)}
}

// isTokenExchange reports whether req is POST /v1/teams/{team_name}/service_token.
func isTokenExchange(req *http.Request) bool {
	if req.Method != http.MethodPost {
		return false
	}
	rest, ok := strings.CutPrefix(req.URL.Path, "/v1/teams/")
	if !ok {
		return false
	}
	team, tail, _ := strings.Cut(rest, "/")
	return team != "" && tail == "service_token"
}

// sourceAddress is the IP address the request came from: the connection's
// peer, never a header a client can write.
func sourceAddress(req *http.Request) string {
	host, _, err := net.SplitHostPort(req.RemoteAddr)
	if err != nil {
		return req.RemoteAddr
	}
	return host
}

// requireJSONObject answers 415 unsupported_content_type for a JSON body
// that is not a JSON object, as the service's error table says; other
// malformed bodies are left to validation.
func requireJSONObject(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.Body == nil || req.Body == http.NoBody || !strings.HasPrefix(strings.ToLower(req.Header.Get("Content-Type")), "application/json") {
			return next(c)
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		trimmed := bytes.TrimLeft(body, " \t\r\n")
		if len(trimmed) > 0 && trimmed[0] != '{' {
			return newError(http.StatusUnsupportedMediaType, "unsupported_content_type", "the request body must be a JSON object")
		}
		return next(c)
	}
}

// rateHeaders has the fields of every generated response-headers type of the
// API, so it converts to each of them.
type rateHeaders struct {
	XRateLimitLimit     int64
	XRateLimitRemaining int64
	XRateLimitReset     int64
	XRateLimitRetryAt   int64
}

type rateHeadersKey struct{}

func toRateHeaders(d ratelimit.Decision) rateHeaders {
	return rateHeaders{
		XRateLimitLimit:     int64(d.Limit),
		XRateLimitRemaining: int64(d.Remaining),
		XRateLimitReset:     ratelimit.UnixCeil(d.Reset),
		XRateLimitRetryAt:   ratelimit.UnixCeil(d.RetryAt),
	}
}

// unknownRate is what the headers say of a bucket of limit requests per
// period that could not be read (its store, the shared database, failed):
// bounds that hold whatever the bucket holds, so a client pacing itself on
// them is never early. Nothing is known to remain; the bucket is full again
// at the latest one period from now (its arrival time is never further
// ahead), and one request fits again at the latest one emission interval
// from now.
func unknownRate(limit int, period time.Duration, now time.Time) rateHeaders {
	interval := max(period/time.Duration(max(limit, 1)), time.Microsecond)
	return rateHeaders{
		XRateLimitLimit:     int64(limit),
		XRateLimitRemaining: 0,
		XRateLimitReset:     ratelimit.UnixCeil(now.Add(period)),
		XRateLimitRetryAt:   ratelimit.UnixCeil(now.Add(interval)),
	}
}

// rateHeadersFrom returns the rate-limit headers of the request in ctx.
func rateHeadersFrom(ctx context.Context) rateHeaders {
	rh, _ := ctx.Value(rateHeadersKey{}).(rateHeaders)
	return rh
}

// authorizeOperations is the API's one authorization: before an
// operation's handler runs it admits the caller by the rule the spec
// declares for the operation (rights, read from x-apistack-roles at start).
// The handlers check no role themselves; they read the admitted caller
// (caller).
func (s *Server) authorizeOperations(table *rights.Table) pamserver.StrictMiddlewareFunc {
	return func(next pamserver.StrictHandlerFunc, op string) pamserver.StrictHandlerFunc {
		return func(c echo.Context, req any) (any, error) {
			if err := s.admit(c.Request().Context(), table, op, c.Param("team_name")); err != nil {
				return nil, err
			}
			return next(c, req)
		}
	}
}

// admit decides whether the request's caller may call op on teamName: the
// token's team must be the path's (403 forbidden_error otherwise, whether or
// not that team exists, so nothing of another team is ever looked up), the
// team enabled, and the caller's effective roles (the union of its live
// groups', plus end_user for a human) must hold one the operation allows. A
// cached caller costs a map lookup and no allocation.
func (s *Server) admit(ctx context.Context, table *rights.Table, op, teamName string) error {
	rule, ok := table.Rule(op)
	if !ok {
		return fmt.Errorf("pam: operation %s has no rights in the spec", op)
	}
	if rule.Open {
		return nil
	}
	st := authFrom(ctx)
	if st.principal == nil {
		return st.err
	}
	p := st.principal
	if subtle.ConstantTimeCompare([]byte(p.TeamName), []byte(teamName)) != 1 {
		return errForbidden("this token has no access to team %q", teamName)
	}
	if p.TeamDisabled {
		return newError(http.StatusForbidden, pamapi.ErrorNameDisabledTeam, "team %q is disabled", teamName)
	}
	roles, err := s.rolesOf(ctx, p.UserID)
	if err != nil {
		return err
	}
	set := table.Caller(roles...)
	if p.UserKind == "human" {
		set |= table.Role(endUser)
	}
	if !rule.Allows(set) {
		return errForbidden("this operation needs one of the roles %s", strings.Join(rule.Names, ", "))
	}
	st.admitted = true
	return nil
}

// endUser is the role every human user holds without a group granting it.
const endUser = "end_user"

// caller returns the caller the authorization admitted for this request. A
// request that reached a handler without being admitted (a route outside
// the strict handler) is refused, never served unchecked.
func caller(ctx context.Context) (*principal, error) {
	st := authFrom(ctx)
	if st.principal == nil || !st.admitted {
		return nil, errors.New("pam: the request reached its handler without authorization")
	}
	return st.principal, nil
}

// effectiveRoles are a caller's roles: the union of its live groups' roles,
// plus end_user for a human, sorted.
func (s *Server) effectiveRoles(ctx context.Context, p *principal) ([]string, error) {
	roles, err := s.rolesOf(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	roles = slices.Clone(roles) // the cached slice is shared
	if p.UserKind == "human" && !slices.Contains(roles, endUser) {
		roles = append(roles, endUser)
		slices.Sort(roles)
	}
	return roles, nil
}

// maintenance answers every API call with 503 service_offline while the
// operator has the service offline. It runs after the rate limiter, so the
// answer carries the rate-limit headers like every other. On a shared
// database the switch is read from the database whenever the cache of it
// was dropped (after any commit, this replica's or another's), since the
// operator may have flipped it through another replica.
func (s *Server) maintenance(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !strings.HasPrefix(c.Request().URL.Path, "/v1/") {
			return next(c)
		}
		if s.store.db.Shared() {
			offline, ok := s.offlineSwitch.Get("")
			if !ok {
				gen := s.offlineSwitch.Generation()
				var err error
				if offline, err = s.store.offline(c.Request().Context()); err != nil {
					return err
				}
				s.offlineSwitch.Put(gen, "", offline)
			}
			s.offline.Store(offline)
		}
		if s.offline.Load() {
			return newError(http.StatusServiceUnavailable, pamapi.ErrorNameServiceOffline, "the service is offline for maintenance; retry later")
		}
		return next(c)
	}
}

// token returns the record of the token whose hash is hash, from the cache
// when it is there. Whether the token still works (expiry, revocation) is
// decided by the caller on every request; the cache is dropped on every
// change that revokes one.
func (s *Server) token(ctx context.Context, hash []byte) (tokenRecord, error) {
	key := string(hash)
	if rec, ok := s.tokens.Get(key); ok {
		return rec, nil
	}
	gen, switchGen := s.tokens.Generation(), s.offlineSwitch.Generation()
	rec, offline, err := s.store.tokenByHash(ctx, hash)
	if err != nil {
		return tokenRecord{}, err
	}
	s.tokens.Put(gen, key, rec)
	if offline != nil && s.store.db.Shared() {
		// Read with the token: the maintenance check after authentication
		// finds it cached instead of asking the database again.
		s.offlineSwitch.Put(switchGen, "", *offline)
	}
	return rec, nil
}

// rolesOf returns a user's effective roles (the union of its live groups'),
// from the cache when they are there. The slice is shared: never modify it.
func (s *Server) rolesOf(ctx context.Context, userID string) ([]string, error) {
	return s.roles.Load(userID, func() ([]string, error) { return s.store.rolesOf(ctx, userID) })
}
