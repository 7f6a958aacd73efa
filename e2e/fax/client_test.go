package fax_test

import (
	"bytes"
	"context"
	"errors"
	"github.com/apistack/apistack/e2e/faxenv"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients/fax"
	"github.com/apistack/apistack/internal/examplestack"
	"github.com/apistack/apistack/protocol/contract"
)

func TestClient_SendGetListCancelRefreshDeleteAgainstTheServer(t *testing.T) {
	late := &examplestack.LateHandler{}
	hooks := httptest.NewServer(late)
	t.Cleanup(hooks.Close)
	svc, err := faxenv.Start(hooks.URL + "/")
	require.NoError(t, err)
	t.Cleanup(svc.Stop)

	var mu sync.Mutex
	types := map[string][]string{}
	h, err := fax.NewWebhookHandler(svc.Server.Operator().WebhookPublicKey(), func(_ context.Context, e fax.Event) error {
		mu.Lock()
		defer mu.Unlock()
		types[e.FaxID] = append(types[e.FaxID], e.Type)
		return nil
	})
	require.NoError(t, err)
	late.Set(h)
	typesOf := func(id string) []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), types[id]...)
	}

	rt, err := contract.ForAPI(contract.Fax, nil, contract.OnViolation(func(v *contract.Violation) { t.Errorf("%v", v) }))
	require.NoError(t, err)
	c, err := fax.New(fax.Config{BaseURL: svc.URL, APIKey: svc.APIKey, Transport: rt})
	require.NoError(t, err)
	ctx := context.Background()

	sent, err := c.SendFax(ctx, fax.SendFaxParams{ConnectionID: svc.ConnectionID, To: "+14155550123", From: svc.From, MediaURL: svc.DocURL, StoreMedia: true})
	require.NoError(t, err)
	assert.Equal(t, fax.Status("queued"), sent.Status)
	id := sent.ID.String()
	require.Eventually(t, func() bool {
		return len(typesOf(id)) == 5 && typesOf(id)[4] == "fax.deleted" || len(typesOf(id)) == 4
	}, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, []string{"fax.queued", "fax.media.processed", "fax.sending.started", "fax.delivered"}, typesOf(id))

	got, err := c.GetFax(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, fax.Status("delivered"), got.Status)
	refreshed, err := c.RefreshFax(ctx, id)
	require.NoError(t, err)
	require.NotNil(t, refreshed.StoredMediaURL)
	doc, err := c.GetMedia(ctx, *refreshed.StoredMediaURL)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(doc, []byte("%PDF")), "the stored document is the PDF sent")
	_, err = c.GetMedia(ctx, *refreshed.StoredMediaURL+"0")
	var mediaErr *fax.Error
	require.True(t, errors.As(err, &mediaErr), "%v", err)
	assert.Equal(t, http.StatusForbidden, mediaErr.StatusCode)

	var listed []string
	for f, err := range c.ListFaxes(ctx, &fax.ListFaxesOptions{PageSize: 1}) {
		require.NoError(t, err)
		listed = append(listed, f.ID.String())
	}
	assert.Equal(t, []string{id}, listed)

	_, err = c.CancelFax(ctx, id)
	var apiErr *fax.Error
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, http.StatusUnprocessableEntity, apiErr.StatusCode)

	require.NoError(t, c.DeleteFax(ctx, id))
	require.Eventually(t, func() bool { e := typesOf(id); return len(e) == 5 && e[4] == "fax.deleted" }, 10*time.Second, 10*time.Millisecond)
	_, err = c.GetFax(ctx, id)
	require.True(t, errors.As(err, &apiErr))
	assert.Equal(t, http.StatusNotFound, apiErr.StatusCode)
}

func TestClient_SendRefusedNamesTheBadFields(t *testing.T) {
	svc, err := faxenv.Start("http://127.0.0.1:9/")
	require.NoError(t, err)
	t.Cleanup(svc.Stop)
	rt, err := contract.ForAPI(contract.Fax, nil, contract.WithoutRequestValidation(), contract.OnViolation(func(v *contract.Violation) { t.Errorf("%v", v) }))
	require.NoError(t, err)
	c, err := fax.New(fax.Config{BaseURL: svc.URL, APIKey: svc.APIKey, Transport: rt})
	require.NoError(t, err)

	_, err = c.SendFax(context.Background(), fax.SendFaxParams{ConnectionID: svc.ConnectionID, To: "12345", From: svc.From, MediaURL: "ftp://x/doc.pdf"})
	var apiErr *fax.Error
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, http.StatusUnprocessableEntity, apiErr.StatusCode)
	assert.ElementsMatch(t, []string{"/media_url"}, apiErr.Pointers(), "the schema refuses media_url before the handler checks numbers")

	bad, err := fax.New(fax.Config{BaseURL: svc.URL, APIKey: "KEYwrong", Transport: rt})
	require.NoError(t, err)
	_, err = bad.GetFax(context.Background(), "0e5a3c8f-1f0a-4f57-9c1d-8a3b2c4d5e6f")
	require.True(t, errors.As(err, &apiErr))
	assert.Equal(t, http.StatusUnauthorized, apiErr.StatusCode)
}

func TestClient_FaxApplicationsCreateGetUpdateListDelete(t *testing.T) {
	svc, err := faxenv.Start("http://127.0.0.1:9/")
	require.NoError(t, err)
	t.Cleanup(svc.Stop)
	rt, err := contract.ForAPI(contract.Fax, nil, contract.OnViolation(func(v *contract.Violation) { t.Errorf("%v", v) }))
	require.NoError(t, err)
	c, err := fax.New(fax.Config{BaseURL: svc.URL, APIKey: svc.APIKey, Transport: rt})
	require.NoError(t, err)
	ctx := context.Background()

	created, err := c.CreateApplication(ctx, fax.CreateApplicationParams{Name: "billing", WebhookURL: "https://example.com/hooks"})
	require.NoError(t, err)
	assert.NotEmpty(t, created.ID)
	assert.Equal(t, "billing", created.Name)
	assert.Equal(t, "https://example.com/hooks", created.WebhookURL)
	assert.Empty(t, created.WebhookFailoverURL)

	got, err := c.GetApplication(ctx, created.ID)
	require.NoError(t, err)
	assert.Equal(t, *created, *got)

	name, failover := "billing-eu", "https://example.com/failover"
	updated, err := c.UpdateApplication(ctx, created.ID, fax.UpdateApplicationParams{Name: &name, WebhookFailoverURL: &failover})
	require.NoError(t, err)
	assert.Equal(t, "billing-eu", updated.Name)
	assert.Equal(t, "https://example.com/hooks", updated.WebhookURL, "an absent field stays as it is")
	assert.Equal(t, failover, updated.WebhookFailoverURL)

	var ids []string
	for a, err := range c.ListApplications(ctx, &fax.ListApplicationsOptions{PageSize: 1}) {
		require.NoError(t, err)
		ids = append(ids, a.ID)
	}
	assert.Contains(t, ids, created.ID)
	assert.Contains(t, ids, svc.ConnectionID, "the service's own application is listed too")

	require.NoError(t, c.DeleteApplication(ctx, created.ID))
	_, err = c.GetApplication(ctx, created.ID)
	var apiErr *fax.Error
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, http.StatusNotFound, apiErr.StatusCode)
}
