package admin_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/adminapi"
	"github.com/apistack/apistack/servers/internal/egress/egresstest"
)

// TestCreateFaxApplication_RefusesEverySpellingOfAMetadataAddress: the
// admin API stores a webhook URL under the fax API's destination policy:
// a link-local or cloud-metadata address, however it is spelled, is
// refused 400 (here on a fax server that allows private destinations).
func TestCreateFaxApplication_RefusesEverySpellingOfAMetadataAddress(t *testing.T) {
	env := startFax(t)
	ctx := context.Background()
	env.createAccount(t, "acme")
	good := "https://93.184.215.14/hook"
	for _, s := range egresstest.Spellings {
		if s.Kind != egresstest.Metadata {
			continue
		}
		for field, body := range map[string]adminapi.FaxCreateApplicationRequest{
			"webhook_url":          {Name: "main", WebhookUrl: s.URL()},
			"webhook_failover_url": {Name: "main", WebhookUrl: good, WebhookFailoverUrl: ptrTo(s.URL())},
		} {
			resp, err := env.admin.CreateFaxApplicationWithResponse(ctx, "acme", body)
			require.NoError(t, err)
			require.Equal(t, http.StatusBadRequest, resp.StatusCode(), "%s: %s in %s: %s", s.Name, s.URL(), field, resp.Body)
			assert.Equal(t, adminapi.ErrorErrorInvalidRequest, resp.JSON400.Error)
			assert.Contains(t, resp.JSON400.Message, field)
			assert.Contains(t, resp.JSON400.Message, "never reachable", s.Name)
		}
	}
	resp, err := env.admin.CreateFaxApplicationWithResponse(ctx, "acme", adminapi.FaxCreateApplicationRequest{Name: "main", WebhookUrl: good})
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, resp.StatusCode(), "a public URL is stored: %s", resp.Body)
}

func ptrTo[T any](v T) *T { return &v }
