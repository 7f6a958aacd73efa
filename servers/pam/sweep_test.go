package pam_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/internal/contractcoverage"
	"github.com/apistack/apistack/internal/contractsweep"
	"github.com/apistack/apistack/protocol/contract"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

// sweepPAM sends one request to every operation declaring want (secured or
// not, as asked), built from the spec for team acme with the given token
// (none when empty), and asserts each is answered want; the middleware and
// the contract transport check every answer against the spec.
func sweepPAM(t *testing.T, env *pamtest.Env, want int, token string, secured bool) {
	t.Helper()
	sweepPAMWith(t, env, want, sweep{values: map[string]string{"team_name": "acme"}, token: token, secured: secured})
}

// pamBodies are well-formed bodies of the operations that take one.
var pamBodies = map[string]string{
	"IssueServiceToken":    `{"key_id":"k","key_secret":"s"}`,
	"CreateGroup":          `{"name":"sweep-group","roles":["end_user"]}`,
	"UpdateGroup":          `{"roles":["end_user"]}`,
	"AddGroupMember":       `{"user_name":"bot"}`,
	"CreateServiceUser":    `{"name":"sweep-bot"}`,
	"UpdateServiceUser":    `{"status":"active"}`,
	"CreateServiceUserKey": `{}`,
}

// sweep is one condition swept across the operations.
type sweep struct {
	values      map[string]string
	token       string
	secured     bool
	contentType string
	body        string
	// except names operations left out of the sweep.
	except []string
}

// sweepPAMWith is sweepPAM with every detail of the requests given.
func sweepPAMWith(t *testing.T, env *pamtest.Env, want int, sw sweep) {
	t.Helper()
	auth := ""
	if sw.token != "" {
		auth = "Bearer " + sw.token
	}
	contractsweep.Status(t, want, contractsweep.Sweep{
		API: contract.PAM, BaseURL: env.URL, Values: sw.values, Authorization: auth, ContentType: sw.contentType,
		Body: func(id string) string {
			if sw.body != "" {
				return sw.body
			}
			return pamBodies[id]
		},
		Keep: func(doc *openapi3.T, op contractcoverage.Operation) bool {
			return op.Secured(doc) == sw.secured && !slices.Contains(sw.except, op.ID)
		},
	})
}

// adminToken starts a server with team acme and returns a pam_admin token.
func adminToken(t *testing.T, opts pamtest.Options) (*pamtest.Env, string) {
	t.Helper()
	env := pamtest.Start(t, opts)
	env.Team(t, "acme")
	_, _, tok := issueAdmin(t, env, "bot")
	return env, tok
}

func TestEveryOperation_WithoutATokenAnswers401(t *testing.T) {
	env, _ := adminToken(t, pamtest.Options{})
	sweepPAM(t, env, http.StatusUnauthorized, "", true)
}

func TestEveryOperation_InMaintenanceAnswers503(t *testing.T) {
	env, token := adminToken(t, pamtest.Options{})
	require.NoError(t, env.Operator.SetOffline(context.Background(), true))
	sweepPAM(t, env, http.StatusServiceUnavailable, token, true)
	sweepPAM(t, env, http.StatusServiceUnavailable, "", false)
}

func TestEveryOperation_WhenTheDatabaseFailsAnswers500(t *testing.T) {
	env, token := adminToken(t, pamtest.Options{})
	testdb.DropTables(t, env.DB)
	sweepPAM(t, env, http.StatusInternalServerError, token, true)
	sweepPAM(t, env, http.StatusInternalServerError, "", false)
}

func TestEveryOperation_WhenTheDatabaseIsGoneAnswers503(t *testing.T) {
	env, token := adminToken(t, pamtest.Options{})
	require.NoError(t, env.DB.Close())
	sweepPAM(t, env, http.StatusServiceUnavailable, token, true)
	sweepPAM(t, env, http.StatusServiceUnavailable, "", false)
}

func TestEveryOperation_WithAMalformedTeamNameAnswers400(t *testing.T) {
	env, token := adminToken(t, pamtest.Options{})
	sweepPAMWith(t, env, http.StatusBadRequest, sweep{values: map[string]string{"team_name": "-Not A Team"}, token: token, secured: true})
}

func TestEveryOperation_ForUnknownNamesAnswers404(t *testing.T) {
	env, token := adminToken(t, pamtest.Options{})
	// The team's own lists and current_user name nothing unknown: their 404
	// (an unknown team) is unreachable with a token (see below).
	sweepPAMWith(t, env, http.StatusNotFound, sweep{values: map[string]string{"team_name": "acme",
		"group_name": "no-such-group", "user_name": "no-such-user", "key_id": "no-such-key"}, token: token, secured: true,
		except: []string{"GetCurrentUser", "ListGroups", "ListRoles", "ListServiceUsers", "ListUsers"}})
}

func TestEveryOperation_ForAnotherTeamAnswers403(t *testing.T) {
	// A token belongs to one team; another team's paths are refused whether
	// or not that team exists, so its 404s are unreachable with a token.
	env, token := adminToken(t, pamtest.Options{})
	env.Team(t, "other")
	for _, team := range []string{"other", "no-such-team"} {
		sweepPAMWith(t, env, http.StatusForbidden, sweep{values: map[string]string{"team_name": team}, token: token, secured: true})
	}
}

func TestEveryOperation_WithABodyThatIsNotJSONAnswers415(t *testing.T) {
	env, token := adminToken(t, pamtest.Options{})
	sweepPAMWith(t, env, http.StatusUnsupportedMediaType, sweep{values: map[string]string{"team_name": "acme"},
		token: token, secured: true, contentType: "text/plain"})
}

func TestEveryOperation_OverTheRateLimitAnswers429(t *testing.T) {
	// The token exchange spends its principal's one request of the hour;
	// every later one is refused.
	env, token := adminToken(t, pamtest.Options{Settings: pam.Settings{RateLimit: 1, RateLimitPeriod: time.Hour}})
	sweepPAMWith(t, env, http.StatusTooManyRequests, sweep{values: map[string]string{"team_name": "acme"}, token: token, secured: true})
}

func TestUpdateServiceUser_RenamingOntoATakenNameIsAConflict(t *testing.T) {
	env, token := adminToken(t, pamtest.Options{})
	env.ServiceUser(t, "acme", "builder", "end_user")
	env.ServiceUser(t, "acme", "tester", "end_user")
	api := newAPI(t, env.URL)
	name := "tester"
	resp, err := api.UpdateServiceUserWithResponse(context.Background(), "acme", "builder",
		pamapi.UpdateServiceUserJSONRequestBody{Name: &name}, bearer(token))
	require.NoError(t, err)
	require.Equal(t, http.StatusConflict, resp.StatusCode(), string(resp.Body))
	require.NotNil(t, resp.JSON409)
	assert.Equal(t, pamapi.ErrorNameResourceAlreadyExists, resp.JSON409.Error)
}

func TestEveryOperation_WithABodyOverTheLimitAnswers413(t *testing.T) {
	env, token := adminToken(t, pamtest.Options{})
	contractsweep.TooLarge(t, contract.PAM, env.URL, map[string]string{"team_name": "acme"}, "Bearer "+token,
		func(string) int64 { return 64 << 10 })
}
