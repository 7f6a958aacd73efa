package fax

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/ratelimit"
	"github.com/apistack/apistack/servers/internal/storeerr"
)

// authState is what resolveAuth learned about a request's API key; the spec's
// security check (authenticate) and the handlers read it from the context,
// so the key is looked up once per request.
type authState struct {
	accountID string
	// accountName names the account's tenant set (whose clock its time is).
	accountName string
	err         *apiError
}

type authStateKey struct{}

// resolveAuth looks up the API key of the request, if any, and records the
// outcome. It refuses nothing itself: whether an operation needs a key is the
// spec's business (authenticate).
func (s *Server) resolveAuth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		st := s.lookupKey(req)
		c.SetRequest(req.WithContext(context.WithValue(req.Context(), authStateKey{}, st)))
		if st.err == nil {
			if err := s.takeRequest(c, st); err != nil {
				return err
			}
		}
		return next(c)
	}
}

// takeRequest spends one request of the account's rate, read on its tenant
// set's clock: past it, 429 with Retry-After the seconds until the next is
// allowed.
func (s *Server) takeRequest(c echo.Context, st *authState) error {
	ctx := c.Request().Context()
	clk := s.cfg.ClockFor(st.accountName)
	d, err := s.limiter.Take(ratelimit.WithClock(ctx, clk), "account:"+st.accountID)
	if err != nil {
		return fmt.Errorf("fax: rate limit: %w", err)
	}
	if d.Allowed {
		return nil
	}
	wait := max(int(math.Ceil(d.RetryAt.Sub(clk.Now()).Seconds())), 1)
	c.Response().Header().Set("Retry-After", strconv.Itoa(wait))
	return newError(http.StatusTooManyRequests, errCodeTooManyRequests,
		"this account may make %d requests per %s; retry in %d s", d.Limit, s.cfg.RateLimitPeriod, wait)
}

func (s *Server) lookupKey(r *http.Request) *authState {
	h := r.Header.Get("Authorization")
	if h == "" {
		return &authState{err: errAuthentication("an Authorization: Bearer <API_KEY> header is required")}
	}
	scheme, key, ok := strings.Cut(h, " ")
	key = strings.TrimSpace(key)
	if !ok || !strings.EqualFold(scheme, "Bearer") || key == "" || strings.ContainsAny(key, " \t") {
		return &authState{err: errAuthentication("the Authorization header must be \"Bearer <API_KEY>\"")}
	}
	hash := hashKey(key)
	k, err := s.apiKey(r.Context(), hash)
	acct, stored := k.accountID, k.stored
	if err != nil && !errors.Is(err, storeerr.ErrNotFound) {
		if apiserver.Unavailable(err) {
			return &authState{err: newError(http.StatusServiceUnavailable, faxapi.ErrorCodeServiceUnavailable, "%s", apiserver.UnavailableMessage)}
		}
		s.logger.ErrorContext(r.Context(), "fax: look up api key", "err", err)
		return &authState{err: faxErrors.Internal()}
	}
	// Compare in constant time even when the lookup found nothing, so an
	// unknown key and a wrong one take the same time.
	if stored == nil {
		stored = make([]byte, len(hash))
	}
	if subtle.ConstantTimeCompare(stored, hash) != 1 || acct == "" {
		return &authState{err: errAuthentication("the API key is not valid")}
	}
	apiserver.Attribute(r.Context(), k.accountName)
	return &authState{accountID: acct, accountName: k.accountName}
}

// authenticate is the spec's check of the bearerAuth scheme: it passes when
// the request's key resolved to an account.
func authenticate(ctx context.Context, in *openapi3filter.AuthenticationInput) error {
	if in.SecuritySchemeName != "bearerAuth" {
		return fmt.Errorf("unknown security scheme %q", in.SecuritySchemeName)
	}
	st, _ := ctx.Value(authStateKey{}).(*authState)
	if st == nil {
		return errAuthentication("an Authorization: Bearer <API_KEY> header is required")
	}
	if st.err != nil {
		return st.err
	}
	return nil
}

// accountFrom returns the account of the request's API key.
func accountFrom(ctx context.Context) (string, error) {
	st, _ := ctx.Value(authStateKey{}).(*authState)
	if st == nil {
		return "", errAuthentication("an Authorization: Bearer <API_KEY> header is required")
	}
	if st.err != nil {
		return "", st.err
	}
	return st.accountID, nil
}

// hashKey is how API keys are stored: their SHA-256 (keys are 128-bit
// random, so a fast hash is enough).
func hashKey(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return sum[:]
}

// newAPIKey returns a fresh API key (version 2).
func newAPIKey() string { return "KEY" + rand.Text() }
