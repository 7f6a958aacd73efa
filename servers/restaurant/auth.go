package restaurant

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"github.com/apistack/apistack/servers/internal/storeerr"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/gen/restaurantapi"
	"github.com/apistack/apistack/gen/restaurantserver"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/ratelimit"
)

// authState is what the resolve middleware learned about a request's bearer
// token; the spec's security check (authenticate) and the gate read it from
// the request context, so the token is looked up once per request.
type authState struct {
	clientID string
	// clientName names the client's tenant set, whose clock is its time.
	clientName string
	err        *apiError
}

type (
	authStateKey  struct{}
	requestIDKey  struct{}
	restaurantKey struct{}
)

func authFrom(ctx context.Context) *authState {
	st, _ := ctx.Value(authStateKey{}).(*authState)
	if st == nil {
		return &authState{err: newError(http.StatusUnauthorized, restaurantapi.ErrorKeyAUTHENTICATIONREQUIRED,
			"an Authorization: Bearer token is required; log in first")}
	}
	return st
}

func requestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// restaurantFrom returns the GUID of the restaurant the gate admitted.
func restaurantFrom(ctx context.Context) string {
	r, _ := ctx.Value(restaurantKey{}).(string)
	return r
}

// resolve gives the request its ID and looks up its bearer token, if any. It
// refuses nothing itself: whether an operation needs a token is the spec's
// business (authenticate, below).
func (s *Server) resolve(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		ctx := context.WithValue(req.Context(), requestIDKey{}, rand.Text())
		ctx = context.WithValue(ctx, authStateKey{}, s.resolveToken(ctx, req.Header.Get("Authorization")))
		c.SetRequest(req.WithContext(ctx))
		return next(c)
	}
}

func (s *Server) resolveToken(ctx context.Context, header string) *authState {
	if header == "" {
		return &authState{err: newError(http.StatusUnauthorized, restaurantapi.ErrorKeyAUTHENTICATIONREQUIRED,
			"an Authorization: Bearer token is required; log in first")}
	}
	scheme, token, ok := strings.Cut(header, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return &authState{err: newError(http.StatusUnauthorized, restaurantapi.ErrorKeyINVALIDTOKEN,
			"the Authorization header must be \"Bearer <accessToken>\"")}
	}
	t, err := s.token(ctx, hashSecret(token))
	clientID, expires := t.clientID, t.expires
	switch {
	case errors.Is(err, storeerr.ErrNotFound):
		return &authState{err: newError(http.StatusUnauthorized, restaurantapi.ErrorKeyINVALIDTOKEN,
			"the bearer token is not valid; log in again")}
	case err != nil && apiserver.Unavailable(err):
		return &authState{err: newError(http.StatusServiceUnavailable, restaurantapi.ErrorKeySERVICEUNAVAILABLE, "%s", apiserver.UnavailableMessage)}
	case err != nil:
		s.logger.ErrorContext(ctx, "read token", "err", err)
		return &authState{err: newError(http.StatusInternalServerError, restaurantapi.ErrorKeyINTERNALERROR,
			"an unexpected error occurred; retry later")}
	case !s.cfg.ClockFor(t.clientName).Now().Before(expires):
		return &authState{err: newError(http.StatusUnauthorized, restaurantapi.ErrorKeyTOKENEXPIRED,
			"the bearer token expired at %s; log in again", expires.UTC().Format(time.RFC3339))}
	}
	apiserver.Attribute(ctx, t.clientName)
	return &authState{clientID: clientID, clientName: t.clientName}
}

// authenticate is the spec's check of the bearerAuth scheme: it passes when
// the request's token resolved to an API client.
func authenticate(ctx context.Context, in *openapi3filter.AuthenticationInput) error {
	if in.SecuritySchemeName != "bearerAuth" {
		return fmt.Errorf("unknown security scheme %q", in.SecuritySchemeName)
	}
	if st := authFrom(ctx); st.err != nil {
		return st.err
	}
	return nil
}

// gate admits a validated configuration request: the restaurant of its
// header must exist and be granted to the caller, and the restaurant's rate
// limits must allow one more request. It runs after validation, so the header
// is a well-formed GUID and the token resolved.
func (s *Server) gate(f restaurantserver.StrictHandlerFunc, operationID string) restaurantserver.StrictHandlerFunc {
	if operationID == "Login" {
		return f
	}
	return func(c echo.Context, request any) (any, error) {
		req := c.Request()
		ctx := req.Context()
		st := authFrom(ctx)
		if st.err != nil {
			return nil, st.err
		}
		guid := strings.ToLower(req.Header.Get(headerRestaurant))
		exists, granted, err := s.access(ctx, st.clientID, guid)
		switch {
		case err != nil:
			return nil, err
		case !exists || !granted:
			// A restaurant that does not exist answers as one not granted:
			// a client learns nothing of the restaurants it may not read,
			// not even that they exist.
			e := newError(http.StatusForbidden, restaurantapi.ErrorKeyRESTAURANTNOTGRANTED,
				"this API client was not granted access to restaurant %s", guid)
			e.Extra.Field = headerRestaurant
			return nil, e
		}
		// Both limits in one call of the store (one statement on
		// PostgreSQL), the second spent only when the first allowed.
		limiters := make([]*ratelimit.Limiter, len(s.limiters))
		for i, l := range s.limiters {
			limiters[i] = l.limiter
		}
		// The windows pass in the caller's time (its sandbox's clock).
		clientClock := s.cfg.ClockFor(st.clientName)
		decisions, err := ratelimit.TakeAll(ratelimit.WithClock(ctx, clientClock), guid, limiters...)
		if err != nil {
			return nil, err
		}
		for i, d := range decisions {
			l := s.limiters[i]
			if !d.Allowed {
				s.cfg.Telemetry.RateLimited("restaurant", l.name)
				e := newError(http.StatusTooManyRequests, restaurantapi.ErrorKeyRATELIMITED,
					"restaurant %s is over its limit of %d requests per %s; retry after %s", guid, d.Limit, l.period, d.RetryAt.UTC().Format(time.RFC3339))
				e.Extra.RetryAfter = retryAfterSeconds(clientClock.Now(), d)
				return nil, e
			}
		}
		c.SetRequest(req.WithContext(context.WithValue(ctx, restaurantKey{}, guid)))
		return f(c, request)
	}
}

// namedLimiter is one of the restaurant rate limits.
type namedLimiter struct {
	limiter *ratelimit.Limiter
	period  time.Duration
	// name is the limit's label in the refusals metric.
	name string
}

// retryAfterSeconds is the Retry-After of a refused request: whole seconds,
// rounded up, at least one.
func retryAfterSeconds(now time.Time, d ratelimit.Decision) int {
	return max(1, int(math.Ceil(d.RetryAt.Sub(now).Seconds())))
}
