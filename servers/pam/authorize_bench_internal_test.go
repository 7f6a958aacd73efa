package pam

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/pamserver"
	"github.com/apistack/apistack/servers/internal/cache"
	"github.com/apistack/apistack/servers/internal/rights"
)

// admittedCall is an operation behind the authorization with its caller
// resolved and its roles cached, as on every request after the first of a
// token: what the authorization adds to a request is its run less a bare
// handler's.
func admittedCall(tb testing.TB, op, role string) (call func() error, bare func() error) {
	tb.Helper()
	spec, err := pamserver.GetSpec()
	require.NoError(tb, err)
	table, err := rights.FromSpec(spec)
	require.NoError(tb, err)
	s := &Server{roles: cache.New[[]string](16, time.Minute)}
	s.roles.Put(s.roles.Generation(), "user-1", []string{role})
	st := &authState{principal: &principal{UserID: "user-1", UserName: "bot", UserKind: "service", TeamID: "team-1", TeamName: "acme"}}
	req := httptest.NewRequest(http.MethodGet, "/v1/teams/acme/groups/ops", nil)
	req = req.WithContext(context.WithValue(req.Context(), authStateKey{}, st))
	c := echo.New().NewContext(req, httptest.NewRecorder())
	c.SetParamNames("team_name", "group_name")
	c.SetParamValues("acme", "ops")
	handler := func(echo.Context, any) (any, error) { return nil, nil }
	h := s.authorizeOperations(table)(handler, op)
	return func() error {
			st.admitted = false
			_, err := h(c, nil)
			return err
		}, func() error {
			_, err := handler(c, nil)
			return err
		}
}

// The authorization admits a cached caller without allocating.
func TestAuthorizeOperations_AdmitsWithoutAllocating(t *testing.T) {
	call, _ := admittedCall(t, "GetGroup", "security_admin")
	require.NoError(t, call())
	if testing.AllocsPerRun(100, func() { _ = call() }) != 0 {
		t.Fatal("the authorization allocates on an admitted call")
	}
	refused, _ := admittedCall(t, "CreateGroup", "security_admin")
	require.Error(t, refused())
}

// BenchmarkAuthorizeOperations measures the authorization of one request
// (admitted: a reader's GetGroup) beside the bare handler it wraps; run the
// two interleaved (-count) and compare the medians.
func BenchmarkAuthorizeOperations(b *testing.B) {
	call, bare := admittedCall(b, "GetGroup", "security_admin")
	for _, bc := range []struct {
		name string
		run  func() error
	}{{"admitted", call}, {"bare", bare}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := bc.run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
