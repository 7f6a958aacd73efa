package admin_test

import (
	"context"
	"database/sql"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/adminapi"
	"github.com/apistack/apistack/protocol/contract"
	"github.com/apistack/apistack/servers/admin"
	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/internal/stacktest"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

const adminToken = "test-admin-token"

// specViolation fails t on each response of a server that breaks its spec
// (a Config's OnResponseViolation).
func specViolation(t testing.TB) func(r *http.Request, status int, err error) {
	return func(r *http.Request, status int, err error) {
		t.Errorf("response %d to %s %s breaks the spec: %v", status, r.Method, r.URL, err)
	}
}

// checked is cfg with its token set to adminToken and every response checked
// against the spec, a violation failing t.
func checked(t testing.TB, cfg admin.Config) admin.Config {
	cfg.Token, cfg.ValidateResponses, cfg.OnResponseViolation = adminToken, true, specViolation(t)
	return cfg
}

// serveAdmin serves the admin API cfg configures until t ends and returns its
// URL.
func serveAdmin(t testing.TB, cfg admin.Config) string {
	t.Helper()
	srv, err := admin.New(cfg)
	require.NoError(t, err)
	return stacktest.HTTP(t, srv)
}

// adminOver serves the admin API over cfg's servers (and over a fresh PAM
// server when cfg names none), checked against its spec, until t ends, and
// returns a client of it.
func adminOver(t testing.TB, cfg admin.Config) *adminapi.ClientWithResponses {
	t.Helper()
	if cfg.PAM == nil {
		cfg.PAM = pamtest.Start(t, pamtest.Options{}).Operator
	}
	return adminClient(t, serveAdmin(t, checked(t, cfg)))
}

// withAdminToken sends the admin token.
func withAdminToken(_ context.Context, r *http.Request) error {
	r.Header.Set("Authorization", "Bearer "+adminToken)
	return nil
}

// adminClient is a client of the admin API at url that sends the admin
// token, its exchanges held to the spec (a violation fails t).
func adminClient(t testing.TB, url string) *adminapi.ClientWithResponses {
	t.Helper()
	c, err := adminapi.NewClientWithResponses(url, adminapi.WithHTTPClient(&http.Client{Transport: stacktest.Contract(t, contract.Admin)}),
		adminapi.WithRequestEditorFn(withAdminToken))
	require.NoError(t, err)
	return c
}

// openFaxDB returns a fresh, migrated fax database, closed when t ends.
// SQLite whatever the run's backend: fax has no PostgreSQL migrations on this
// branch yet; once it has (fax.PostgresMigrations), this is testdb.Open.
func openFaxDB(t *testing.T) *sql.DB {
	t.Helper()
	return testdb.OpenOn(t, testdb.SQLite, testdb.Migrations{Schema: "fax", SQLite: fax.API.Migrations().SQLite})
}
