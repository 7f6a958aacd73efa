package admin_test

import (
	"context"
	"database/sql"
	"encoding/base64"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/internal/contractcoverage"
	"github.com/apistack/apistack/internal/contractsweep"
	"github.com/apistack/apistack/protocol/contract"
	"github.com/apistack/apistack/servers/admin"
	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/pam/pamtest"
	"github.com/apistack/apistack/servers/restaurant/restauranttest"
	"github.com/apistack/apistack/servers/storage/storagetest"
)

// fullAdmin is the admin API over every service, with the services'
// databases at hand.
type fullAdmin struct {
	url string
	dbs []*sql.DB
	// only, when set, limits sweeps to the paths under it.
	only string
	// keep, when set, limits sweeps to the operations it reports.
	keep func(op contractcoverage.Operation) bool
}

func startFullAdmin(t *testing.T) *fullAdmin {
	t.Helper()
	return startAdmin(t, true)
}

// startAdmin starts the admin API over PAM, and over fax, restaurant and
// storage too when all is set.
func startAdmin(t *testing.T, all bool) *fullAdmin {
	t.Helper()
	violation := specViolation(t)
	ctx := context.Background()
	faxDB := openFaxDB(t)
	faxKey, err := fax.LoadOrCreateMasterKey(filepath.Join(t.TempDir(), "fax-master.key"))
	require.NoError(t, err)
	fs, err := fax.New(ctx, fax.Config{
		Deps:      fax.Deps{DB: faxDB, ValidateResponses: true, OnResponseViolation: violation, Logger: slog.New(slog.DiscardHandler)},
		MasterKey: faxKey,
	})
	require.NoError(t, err)
	pam := pamtest.Start(t, pamtest.Options{})
	rest := restauranttest.Start(t, restauranttest.Options{})
	store := storagetest.Start(t, storagetest.Options{})
	cfg := checked(t, admin.Config{PAM: pam.Operator, Logger: slog.New(slog.DiscardHandler)})
	if all {
		cfg.Fax, cfg.Restaurant, cfg.Storage = fs.Operator(), rest.Operator, store.Operator
	}
	return &fullAdmin{url: serveAdmin(t, cfg), dbs: []*sql.DB{pam.DB, faxDB, rest.DB, store.DB}}
}

// adminBodies are well-formed bodies of the operations that take one.
var adminBodies = map[string]string{
	"CreatePAMTeam":                 `{"name":"sweep-team"}`,
	"UpdatePAMTeam":                 `{"disabled":false}`,
	"BootstrapPAMServiceUser":       `{"name":"sweep-bot","group":"sweepers","roles":["pam_admin"]}`,
	"CreatePAMHumanUser":            `{"name":"sweeper"}`,
	"SetPAMQuotas":                  `{"groups":10}`,
	"SetPAMMaintenance":             `{"offline":false}`,
	"CreateFaxAccount":              `{"name":"sweep-account"}`,
	"CreateFaxAPIKey":               `{}`,
	"CreateFaxOutboundVoiceProfile": `{"name":"sweep"}`,
	"CreateFaxApplication":          `{"name":"sweep","webhook_url":"http://127.0.0.1:9/"}`,
	"SetFaxNumber":                  `{}`,
	"CreateRestaurant":              `{"name":"Sweep Bistro"}`,
	"ImportRestaurantConfiguration": `{}`,
	"GenerateRestaurantDemo":        `{"menuItems":1}`,
	"CreateRestaurantClient":        `{"name":"sweeper","restaurants":[]}`,
	"CreateStorageBucket":           `{"name":"sweep-bucket"}`,
	"SetStorageBucketVersioning":    `{"status":"Enabled"}`,
	"CreateStorageKey":              `{}`,
}

func init() {
	pdf, err := fax.SamplePDF(1)
	if err != nil {
		panic(err)
	}
	adminBodies["InjectFaxInbound"] = `{"from":"+13125550100","to":"+13125550101","outcome":"received","document":"` +
		base64.StdEncoding.EncodeToString(pdf) + `"}`
}

// unknown names an entity of each kind that does not exist.
var unknown = map[string]string{
	"team_name": "no-such-team", "account_name": "no-such-account", "key_id": "2f4c2a1e-9b7d-4c3a-8e6f-5d4c3b2a1f0e", "account": "no-such-account",
	"phone_number": "+13125550999", "restaurant_guid": "0f4c2a1e-9b7d-4c3a-8e6f-5d4c3b2a1f0e",
	"entity_guid": "1f4c2a1e-9b7d-4c3a-8e6f-5d4c3b2a1f0e", "resource": "menus", "bucket": "no-such-bucket",
}

// sweep sends every admin operation declaring want, with values for its
// parameters and body (or adminBodies), and asserts each answers want.
func (a *fullAdmin) sweep(t *testing.T, want int, values map[string]string, bodies map[string]string, except ...string) {
	t.Helper()
	contractsweep.Status(t, want, contractsweep.Sweep{
		API: contract.Admin, BaseURL: a.url, Values: values, Authorization: "Bearer " + adminToken,
		Body: func(id string) string {
			if b, ok := bodies[id]; ok {
				return b
			}
			if b, ok := bodies["*"]; ok {
				return b
			}
			return adminBodies[id]
		},
		Keep: func(_ *openapi3.T, op contractcoverage.Operation) bool {
			return !slices.Contains(except, op.ID) && (a.only == "" || strings.HasPrefix(op.Path, a.only)) &&
				(a.keep == nil || a.keep(op))
		},
	})
}

func TestEveryOperation_WhenTheDatabasesFailAnswers500(t *testing.T) {
	a := startFullAdmin(t)
	for _, db := range a.dbs {
		testdb.DropTables(t, db)
	}
	// The webhook public key and the maintenance switch are held in memory:
	// their 500s are unreachable (testdata/contract/unreachable.yaml).
	a.sweep(t, http.StatusInternalServerError, unknown, nil, "GetFaxWebhookPublicKey", "GetPAMMaintenance")
}

func TestEveryOperation_WhenTheDatabasesAreGoneAnswers503(t *testing.T) {
	a := startFullAdmin(t)
	for _, db := range a.dbs {
		require.NoError(t, db.Close())
	}
	// The webhook public key and the maintenance switch are held in memory:
	// their 503s are unreachable (testdata/contract/unreachable.yaml).
	a.sweep(t, http.StatusServiceUnavailable, unknown, nil, "GetFaxWebhookPublicKey", "GetPAMMaintenance")
}

func TestEveryOperation_FromASourceOfTooManyWrongTokensAnswers429(t *testing.T) {
	a := startFullAdmin(t)
	for range 10 {
		req, err := http.NewRequest(http.MethodGet, a.url+"/pam/maintenance", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer adm_guess")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	}
	// The right token too: the source is refused before it is compared.
	a.sweep(t, http.StatusTooManyRequests, unknown, nil)
}

func TestEveryOperation_ForUnknownEntitiesAnswers404(t *testing.T) {
	a := startFullAdmin(t)
	// Creating a storage bucket or key, and listing them, name nothing that
	// must exist (an account comes into being with its first bucket or key):
	// their 404 is the one of a process serving no storage API, below.
	a.sweep(t, http.StatusNotFound, unknown, map[string]string{
		"CreateRestaurantClient": `{"name":"sweeper","restaurants":["0f4c2a1e-9b7d-4c3a-8e6f-5d4c3b2a1f0e"]}`,
		"InjectFaxInbound":       strings.Replace(adminBodies["InjectFaxInbound"], "+13125550101", "+13125550998", 1),
	}, "CreateStorageBucket", "CreateStorageKey", "ListStorageBuckets", "ListStorageKeys")
}

func TestEveryOperation_OfAnAPIThisProcessDoesNotServeAnswers404(t *testing.T) {
	a := startAdmin(t, false)
	for _, prefix := range []string{"/fax/", "/restaurant/", "/storage/"} {
		a.only = prefix
		a.sweep(t, http.StatusNotFound, unknown, nil)
	}
}

func TestEveryOperation_WithAnUnexpectedBodyFieldAnswers400(t *testing.T) {
	a := startFullAdmin(t)
	// Only the operations that take a body: the others declare their 400
	// for a malformed path parameter (below), and are sent no body here.
	a.keep = takesBody
	a.sweep(t, http.StatusBadRequest, unknown, map[string]string{"*": `{"no_such_field":true}`})
}

func TestEveryOperation_WithABlankPathParameterAnswers400(t *testing.T) {
	a := startFullAdmin(t)
	// Every path parameter blank: no parameter's schema takes it, so it is
	// refused before any entity is looked for. An operation with no path
	// parameter declares its 400 for its body (above).
	a.keep = func(op contractcoverage.Operation) bool { return strings.Contains(op.Path, "{") }
	blank := map[string]string{}
	for name := range unknown {
		blank[name] = " "
	}
	a.sweep(t, http.StatusBadRequest, blank, nil)
}

// takesBody reports whether op takes a request body.
func takesBody(op contractcoverage.Operation) bool {
	return op.Op.RequestBody != nil
}

func TestEveryOperation_WithoutTheAdminTokenAnswers401(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	// Two wrong tokens an operation: more than a source may send before
	// it is refused 429 (TestEveryOperation_FromASourceOfTooManyWrongTokensAnswers429).
	url := serveAdmin(t, checked(t, admin.Config{PAM: env.Operator, Logger: slog.New(slog.DiscardHandler), WrongTokenBurst: 1000}))
	for _, auth := range []string{"", "Bearer wrong-token"} {
		contractsweep.Status(t, http.StatusUnauthorized, contractsweep.Sweep{
			API: contract.Admin, BaseURL: url, Authorization: auth, Keep: contractsweep.Secured(true),
		})
	}
}

// adminBodyLimits are the admin API's body limits as its spec states them:
// 32 MiB for a configuration import, 70 MiB for an inbound fax, 1 MiB for
// every other operation.
func adminBodyLimit(operationID string) int64 {
	switch operationID {
	case "ImportRestaurantConfiguration":
		return 32 << 20
	case "InjectFaxInbound":
		return 70 << 20
	}
	return 1 << 20
}

func TestEveryOperation_WithABodyOverTheLimitAnswers413(t *testing.T) {
	a := startFullAdmin(t)
	contractsweep.TooLarge(t, contract.Admin, a.url, unknown, "Bearer "+adminToken, adminBodyLimit)
}
