package admin_test

import (
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/adminapi"
	"github.com/apistack/apistack/gen/adminserver"
	"github.com/apistack/apistack/servers/admin"
	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/internal/stalledbody"
	"github.com/apistack/apistack/servers/pam/pamtest"
	"github.com/apistack/apistack/servers/restaurant/restauranttest"
	"github.com/apistack/apistack/servers/storage/storagetest"
)

// TestEveryBody_ThatStallsIs408RequestTimeout sends every operation that
// takes a body, over every service administered and with the admin token,
// a body that stalls past the read timeout: each is answered 408
// request_timeout in the admin API's error body, checked against the spec.
func TestEveryBody_ThatStallsIs408RequestTimeout(t *testing.T) {
	faxKey, err := fax.LoadOrCreateMasterKey(filepath.Join(t.TempDir(), "fax-master.key"))
	require.NoError(t, err)
	faxes, err := fax.New(context.Background(), fax.Config{
		Deps: fax.Deps{DB: openFaxDB(t), ValidateResponses: true, OnResponseViolation: specViolation(t),
			Logger: slog.New(slog.DiscardHandler)},
		MasterKey: faxKey,
	})
	require.NoError(t, err)
	pam := pamtest.Start(t, pamtest.Options{})
	rest := restauranttest.Start(t, restauranttest.Options{})
	store := storagetest.Start(t, storagetest.Options{})
	srv, err := admin.New(checked(t, admin.Config{PAM: pam.Operator, Fax: faxes.Operator(), Restaurant: rest.Operator,
		Storage: store.Operator, Logger: slog.New(slog.DiscardHandler)}))
	require.NoError(t, err)
	stalledbody.Run(t, stalledbody.Target{
		Spec:    adminserver.GetSpec,
		Handler: srv.Handler,
		// What the request names need not exist: its body is read first.
		PathValues: map[string]string{"team_name": "acme", "account_name": "acme", "phone_number": "+13125550100",
			"restaurant_guid": rest.Restaurant, "bucket": "stalled"},
		Bearer: adminToken,
		CheckBody: func(t *testing.T, _ stalledbody.Operation, _ http.Header, body []byte) {
			e := stalledbody.DecodeJSON[adminapi.Error](t, body)
			assert.Equal(t, http.StatusRequestTimeout, e.Code)
			assert.Equal(t, adminapi.ErrorErrorRequestTimeout, e.Error)
			assert.NotEmpty(t, e.Message)
		},
	})
}
