package fax

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"

	"github.com/apistack/apistack/servers/internal/egress/egresstest"
)

// TestDestinations_EverySpellingIsRefusedAtEveryEntryPoint: each spelling
// of a refused address is refused by every operation that stores or uses a
// URL, of the public API and of the operator (the admin API's), in a
// stack that allows private destinations (where metadata addresses stay
// refused) and in one that allows public ones only.
func TestDestinations_EverySpellingIsRefusedAtEveryEntryPoint(t *testing.T) {
	hosts := newLocalHosts(map[string]string{"docs.test": hostOf(documents(t))})
	for mode, opt := range map[string]harnessOption{
		"every private": func(*Config) {},
		"public only":   publicNames(hosts),
	} {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, opt)
			ctx := context.Background()
			op := h.srv.Operator()
			private := h.cfg.Destinations.AllowPrivate
			entries := map[string]func(url string) (status int, err error){
				"SendFax media_url": func(url string) (int, error) {
					resp, err := h.api.SendFaxWithResponse(ctx, faxapi.SendFaxJSONRequestBody{ConnectionId: h.app, To: "+14155550123", From: h.from, MediaUrl: url})
					return statusOr(resp, err)
				},
				"SendFax webhook_url": func(url string) (int, error) {
					resp, err := h.api.SendFaxWithResponse(ctx, faxapi.SendFaxJSONRequestBody{ConnectionId: h.app, To: "+14155550123", From: h.from,
						MediaUrl: "http://docs.test/3-pages.pdf", WebhookUrl: &url})
					return statusOr(resp, err)
				},
				"CreateFaxApplication webhook_url": func(url string) (int, error) {
					resp, err := h.api.CreateFaxApplicationWithResponse(ctx, faxapi.CreateFaxApplicationJSONRequestBody{ApplicationName: "x", WebhookUrl: url})
					return statusOr(resp, err)
				},
				"UpdateFaxApplication webhook_failover_url": func(url string) (int, error) {
					resp, err := h.api.UpdateFaxApplicationWithResponse(ctx, h.app, faxapi.UpdateFaxApplicationJSONRequestBody{WebhookFailoverUrl: &url})
					return statusOr(resp, err)
				},
				"operator CreateApplication webhook_url": func(url string) (int, error) {
					_, err := op.CreateApplication(ctx, Application{AccountID: h.acct, Name: "x", WebhookURL: url})
					return operatorStatus(err), nil
				},
				"operator CreateApplication webhook_failover_url": func(url string) (int, error) {
					_, err := op.CreateApplication(ctx, Application{AccountID: h.acct, Name: "x", WebhookURL: "https://93.184.215.14/hook", WebhookFailoverURL: url})
					return operatorStatus(err), nil
				},
				"operator SetApplicationWebhookURL": func(url string) (int, error) {
					return operatorStatus(op.SetApplicationWebhookURL(ctx, h.acct, h.app, url)), nil
				},
			}
			for name, call := range entries {
				for _, s := range egresstest.Spellings {
					if s.Kind != egresstest.Metadata && private {
						continue // allowed here: the egress package's tests decide those
					}
					status, err := call(s.URL())
					require.NoError(t, err)
					assert.Equal(t, http.StatusUnprocessableEntity, status, "%s: %s (%s)", name, s.Name, s.URL())
				}
			}
			app, err := op.ApplicationOf(ctx, h.acct, h.app)
			require.NoError(t, err)
			assert.NotContains(t, app.WebhookURL, "/hook", "nothing refused was stored")
		})
	}
}

// statusOr is the status of a generated client's answer.
func statusOr(resp interface{ StatusCode() int }, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	return resp.StatusCode(), nil
}

// operatorStatus is what the admin API answers for an operator call's
// error: 422 for ErrInvalid here (the admin API answers it 400), 200 for
// none.
func operatorStatus(err error) int {
	switch {
	case err == nil:
		return http.StatusOK
	case isInvalid(err):
		return http.StatusUnprocessableEntity
	}
	return http.StatusInternalServerError
}

func isInvalid(err error) bool { return errors.Is(err, ErrInvalid) }
