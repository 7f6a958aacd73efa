package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// apiPrefixes are the prefixes of each table's commands, in adminTables'
// order.
var apiPrefixes = []string{"pam-", "fax-", "storage-", "restaurant-"}

func TestAdminTables_OneNamingScheme(t *testing.T) {
	require.Len(t, adminTables, len(apiPrefixes))
	seen := map[string]string{}
	for i, table := range adminTables {
		for _, c := range table {
			assert.True(t, strings.HasPrefix(c.name, apiPrefixes[i]), "%s is named <api>-<verb>", c.name)
			assert.NotEmpty(t, c.help, c.name)
			assert.NotNil(t, c.run, c.name)
			for _, name := range append([]string{c.name}, c.aliases...) {
				assert.NotContains(t, seen, name, "%s names one command", name)
				seen[name] = c.name
			}
		}
	}
}

func TestAdminUsage_ListsEveryCommandAndAlias(t *testing.T) {
	usage := adminUsage()
	for _, table := range adminTables {
		for _, c := range table {
			assert.Contains(t, usage, "  "+strings.TrimSpace(c.name+" "+c.args), c.name)
			assert.Contains(t, usage, c.help, c.name)
			for _, a := range c.aliases {
				assert.Contains(t, usage, "  "+a+" = "+c.name+"\n")
			}
		}
	}
	assert.Contains(t, usage, "  pam-create-team NAME                      create a PAM team\n", "help in one column")
	assert.Contains(t, usage, "  pam-create-service-user [--key-expires D] TEAM USER GROUP [ROLE,ROLE...]\n"+strings.Repeat(" ", helpColumn)+"create a PAM service user",
		"a long synopsis puts its help on the next line")
}

// call is one request the fake admin API received.
type call struct{ Method, Path, Body string }

// fakeAdmin answers every request with {} and records it.
func fakeAdmin(t *testing.T) (url string, calls func() []call) {
	var mu sync.Mutex
	var got []call
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, call{r.Method, r.URL.Path, string(body)})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []call {
		mu.Lock()
		defer mu.Unlock()
		return append([]call(nil), got...)
	}
}

func runAdmin(t *testing.T, url string, args ...string) error {
	t.Helper()
	var out bytes.Buffer
	return adminCommand(context.Background(), append([]string{"--admin-url", url, "--admin-token", "adm_x", "--data-dir", t.TempDir()}, args...), &out, io.Discard)
}

func TestAdminCommand_DispatchesEachCommandToItsCall(t *testing.T) {
	tests := []struct {
		args []string
		want call
	}{
		{[]string{"pam-create-team", "acme"}, call{"POST", "/pam/teams", `{"name":"acme"}`}},
		{[]string{"pam-disable-team", "acme"}, call{"PATCH", "/pam/teams/acme", `{"disabled":true}`}},
		{[]string{"pam-enable-team", "acme"}, call{"PATCH", "/pam/teams/acme", `{"disabled":false}`}},
		{[]string{"pam-quotas", "acme"}, call{"GET", "/pam/teams/acme/quotas", ""}},
		{[]string{"pam-quotas", "--groups", "3", "acme"}, call{"PUT", "/pam/teams/acme/quotas", `{"groups":3}`}},
		{[]string{"pam-maintenance", "on"}, call{"PUT", "/pam/maintenance", `{"offline":true}`}},
		{[]string{"fax-webhook-stats"}, call{"GET", "/fax/webhook_stats", ""}},
		{[]string{"storage-create-bucket", "--versioned", "logs"}, call{"POST", "/storage/buckets", `{"name":"logs","versioning":"Enabled"}`}},
		{[]string{"storage-list-keys"}, call{"GET", "/storage/keys", ""}},
		{[]string{"restaurant-create", "-Bistro-"}, call{"POST", "/restaurant/restaurants", `{"name":"-Bistro-"}`}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			url, calls := fakeAdmin(t)
			require.NoError(t, runAdmin(t, url, tt.args...))
			got := calls()
			require.Len(t, got, 1)
			assert.Equal(t, tt.want.Method, got[0].Method)
			assert.Equal(t, tt.want.Path, got[0].Path)
			if tt.want.Body != "" {
				assert.JSONEq(t, tt.want.Body, got[0].Body)
			}
		})
	}
}

func TestAdminCommand_PAMAliasesMakeTheSameCall(t *testing.T) {
	for _, c := range pamAdminCommands {
		for _, alias := range c.aliases {
			t.Run(alias, func(t *testing.T) {
				args := make([]string, max(c.minArgs, 1))
				for i := range args {
					args[i] = "x"
				}
				if c.name == "pam-create-service-user" {
					args = []string{"acme", "bot", "bots", "pam_admin"}
				}
				if c.name == "pam-maintenance" {
					args = []string{"off"}
				}
				url, calls := fakeAdmin(t)
				require.NoError(t, runAdmin(t, url, append([]string{alias}, args...)...))
				require.NoError(t, runAdmin(t, url, append([]string{c.name}, args...)...))
				got := calls()
				require.Len(t, got, 2)
				assert.Equal(t, got[0], got[1], "%s is %s", alias, c.name)
			})
		}
	}
}

func TestAdminCommand_BadArgumentsAndUnknownCommandsCallNothing(t *testing.T) {
	tests := []struct {
		args []string
		err  string
	}{
		{[]string{"pam-create-team"}, "usage: pam-create-team NAME"},
		{[]string{"create-team", "a", "b"}, "usage: pam-create-team NAME"},
		{[]string{"pam-maintenance", "maybe"}, "usage: pam-maintenance [on|off]"},
		{[]string{"storage-list-buckets", "extra"}, "usage: storage-list-buckets"},
		{[]string{"storage-set-versioning", "b", "On"}, "usage: storage-set-versioning BUCKET Enabled|Suspended"},
		{[]string{"fax-revoke-key", "acme", "not-a-uuid"}, "KEY_ID"},
		{[]string{"pam-quotas", "--groups", "x", "acme"}, "invalid value"},
		{[]string{"team-create", "acme"}, `unknown admin command "team-create"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			url, calls := fakeAdmin(t)
			require.ErrorContains(t, runAdmin(t, url, tt.args...), tt.err)
			assert.Empty(t, calls())
		})
	}
}
