package admin_test

import (
	"net/http"
	"regexp"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/adminserver"
	"github.com/apistack/apistack/servers/admin"
	"github.com/apistack/apistack/servers/internal/rights"
	"github.com/apistack/apistack/servers/internal/testkit"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

// adminPathValues fill the admin spec's path parameters with values of the
// right form. A parameter missing here fails the walk, naming it.
var adminPathValues = map[string]string{
	"team_name": "acme", "account_name": "acme", "key_id": "7c6c3a4e-0f4b-4e0e-9d1e-2f1f4b8b5e01",
	"phone_number": "+13125550100", "restaurant_guid": "7c6c3a4e-0f4b-4e0e-9d1e-2f1f4b8b5e02",
	"resource": "menus", "entity_guid": "7c6c3a4e-0f4b-4e0e-9d1e-2f1f4b8b5e03", "bucket": "photos",
}

// Every operation of the admin spec lists the one role of its role table,
// admin: the admin token gets past the authentication and authorization of
// every one, and a token of the sandbox API (served on the same port) is
// refused 401 by every one.
func TestRights_EveryOperationIsTheAdminTokensOnly(t *testing.T) {
	doc, err := adminserver.GetSpec()
	require.NoError(t, err)
	table, err := rights.FromSpec(doc)
	require.NoError(t, err)
	assert.Equal(t, []string{"admin"}, table.Roles(), "the role table of the adminToken scheme")

	// Room for a wrong token per operation before the guard of wrong tokens
	// answers 429. Only PAM is served behind it: the operations of the
	// other APIs answer the admin token 404 (not served), which is past the
	// rights all the same. Neither the requests (sent without their bodies)
	// nor those 404s are what the spec describes, so nothing is checked
	// against it here but the rights.
	url := serveAdmin(t, admin.Config{Token: adminToken, PAM: pamtest.Start(t, pamtest.Options{}).Operator, WrongTokenBurst: 1000})
	param := regexp.MustCompile(`\{([a-z_]+)\}`)
	paths := doc.Paths.Map()
	names := make([]string, 0, len(paths))
	for p := range paths {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, path := range names {
		for method, op := range paths[path].Operations() {
			assert.Equal(t, []any{"admin"}, op.Extensions[rights.Extension], "%s", op.OperationID)
			target := param.ReplaceAllStringFunc(path, func(m string) string {
				v, ok := adminPathValues[m[1:len(m)-1]]
				require.True(t, ok, "%s: the walk has no value for the path parameter %s", op.OperationID, m)
				return v
			})
			for _, tc := range []struct {
				token string
				admin bool
			}{{adminToken, true}, {"sbt_not-an-admin-token", false}} {
				resp, _ := testkit.Request{Method: method, URL: url + target, Token: tc.token}.Do(t)
				if tc.admin {
					assert.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, resp.StatusCode, "%s with the admin token", op.OperationID)
				} else {
					assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s with another token", op.OperationID)
				}
			}
		}
	}
}
