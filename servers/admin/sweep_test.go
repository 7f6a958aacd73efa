package admin_test

import (
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients/contract"
	"github.com/apistack/apistack/internal/contractcoverage"
	"github.com/apistack/apistack/servers/admin"
	"github.com/apistack/apistack/servers/internal/stacktest"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

func TestEveryOperation_WithoutTheAdminTokenAnswers401(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	// Two wrong tokens an operation: more than a source may send before
	// it is refused 429 (TestEveryOperation_FromASourceOfTooManyWrongTokensAnswers429).
	url := serveAdmin(t, checked(t, admin.Config{PAM: env.Operator, Logger: slog.New(slog.DiscardHandler), WrongTokenBurst: 1000}))
	client := &http.Client{Transport: stacktest.Contract(t, contract.Admin, contract.WithoutRequestValidation())}

	doc, ops, err := contractcoverage.Operations("admin")
	require.NoError(t, err)
	swept := 0
	for _, op := range ops {
		if !op.Declares(http.StatusUnauthorized) || !op.Secured(doc) {
			continue
		}
		for _, token := range []string{"", "wrong-token"} {
			swept++
			req, err := op.NewRequest(url, nil, "")
			require.NoError(t, err)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := client.Do(req)
			require.NoError(t, err, op.ID)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s %s %s: %s", op.ID, req.Method, req.URL.Path, body)
		}
	}
	assert.NotZero(t, swept)
}
