package admin_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/adminapi"
	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/protocol/contract"
	"github.com/apistack/apistack/protocol/faxwebhook"
	"github.com/apistack/apistack/servers/admin"
	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/internal/stacktest"
	"github.com/apistack/apistack/servers/internal/tenantapi"
	"github.com/apistack/apistack/servers/internal/testkit"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

// faxEnv is an admin API over a fax server (simulator and webhook sender
// running, steps back to back) on a fresh database (openFaxDB).
type faxEnv struct {
	admin *adminapi.ClientWithResponses
	// raw sends what the contract transport would refuse to send.
	raw      adminapi.ClientInterface
	adminURL string
	faxURL   string
	pdf      []byte
}

func startFax(t *testing.T) *faxEnv {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	db := openFaxDB(t)
	violation := specViolation(t)
	faxKey, err := fax.LoadOrCreateMasterKey(filepath.Join(t.TempDir(), "fax-master.key"))
	require.NoError(t, err)
	fs, err := fax.New(ctx, fax.Config{Deps: fax.Deps{DB: db, ValidateResponses: true, OnResponseViolation: violation}, MasterKey: faxKey, Settings: fax.Settings{WebhookBackoff: time.Millisecond, WebhookMaxBackoff: 10 * time.Millisecond, Destinations: fax.DestinationOptions{AllowPrivate: true}}}) // webhooks to loopback receivers
	require.NoError(t, err)
	fh, err := fs.Handler()
	require.NoError(t, err)
	faxHTTP := httptest.NewServer(fh)
	fs.SetBaseURL(faxHTTP.URL)
	done := make(chan struct{})
	go func() { defer close(done); _ = fs.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; faxHTTP.Close(); _ = db.Close() })

	env := pamtest.Start(t, pamtest.Options{})
	adminURL := serveAdmin(t, checked(t, admin.Config{PAM: env.Operator, Fax: fs.Operator()}))
	c := adminClient(t, adminURL)
	raw, err := adminapi.NewClient(adminURL, adminapi.WithRequestEditorFn(withAdminToken))
	require.NoError(t, err)
	pdf, err := fax.SamplePDF(2)
	require.NoError(t, err)
	return &faxEnv{admin: c, raw: raw, adminURL: adminURL, faxURL: faxHTTP.URL, pdf: pdf}
}

// faxClient is the generated fax API client with key, validating every
// exchange.
func (e *faxEnv) faxClient(t *testing.T, key string) *tenantapi.FaxClient {
	t.Helper()
	return tenantapi.NewFax(t, e.faxURL, key, tenantapi.WithTransport(stacktest.Contract(t, contract.Fax)))
}

// keyWorks reports the status of a fax API call made with key.
func (e *faxEnv) keyStatus(t *testing.T, key string) int {
	t.Helper()
	r, err := e.faxClient(t, key).API().ListFaxesWithResponse(context.Background(), nil)
	require.NoError(t, err)
	return r.StatusCode()
}

// inbox is a webhook receiver built on protocol/faxwebhook's handler (the
// one clients/fax's receiver is), as a receiving service would build it.
type inbox struct {
	url    string
	mu     sync.Mutex
	events []faxwebhook.Event
}

func newInbox(t *testing.T, key ed25519.PublicKey) *inbox {
	t.Helper()
	in := &inbox{}
	h, err := faxwebhook.NewHandler(key, func(_ context.Context, e faxwebhook.Event) error {
		in.mu.Lock()
		defer in.mu.Unlock()
		in.events = append(in.events, e)
		return nil
	})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	in.url = srv.URL + "/fax-events"
	return in
}

// typesOf returns the types of the events received about faxID, in order.
func (in *inbox) typesOf(faxID string) []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	var out []string
	for _, e := range in.events {
		if e.FaxID == faxID {
			out = append(out, e.Type)
		}
	}
	return out
}

// tenant is an account with a key, an application pointed at an inbox and
// createAccount creates the fax account name through the admin API and
// returns its credentials (the account and its first API key).
func (e *faxEnv) createAccount(t *testing.T, name string) *adminapi.FaxAccountCredentials {
	t.Helper()
	acct, err := e.admin.CreateFaxAccountWithResponse(context.Background(), adminapi.FaxCreateAccountRequest{Name: name})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, acct.StatusCode(), string(acct.Body))
	return acct.JSON201
}

// a number enabled on it.
type tenant struct {
	key    string
	number string
	inbox  *inbox
}

func (e *faxEnv) tenant(t *testing.T, name, number string) tenant {
	t.Helper()
	ctx := context.Background()
	pk, err := e.admin.GetFaxWebhookPublicKeyWithResponse(ctx)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, pk.StatusCode(), string(pk.Body))
	assert.Equal(t, adminapi.FaxWebhookPublicKeyAlgorithmEd25519, pk.JSON200.Algorithm)
	var raw struct {
		PublicKey string `json:"public_key"`
	}
	require.NoError(t, json.Unmarshal(pk.Body, &raw))
	key, err := faxwebhook.ParsePublicKey(raw.PublicKey)
	require.NoError(t, err, "a receiver reads the key the admin API gives")
	in := newInbox(t, key)

	acct := e.createAccount(t, name)
	prof, err := e.admin.CreateFaxOutboundVoiceProfileWithResponse(ctx, name, adminapi.FaxCreateOutboundVoiceProfileRequest{Name: "main"})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, prof.StatusCode(), string(prof.Body))
	app, err := e.admin.CreateFaxApplicationWithResponse(ctx, name, adminapi.FaxCreateApplicationRequest{
		Name: "main", WebhookUrl: in.url, OutboundVoiceProfileId: &prof.JSON201.Id})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, app.StatusCode(), string(app.Body))
	assert.Equal(t, &prof.JSON201.Id, app.JSON201.OutboundVoiceProfileId)
	num, err := e.admin.SetFaxNumberWithResponse(ctx, name, number, adminapi.FaxSetNumberRequest{ApplicationId: &app.JSON201.Id})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, num.StatusCode(), string(num.Body))
	assert.Equal(t, adminapi.FaxNumber{PhoneNumber: number, AccountName: name, ApplicationId: &app.JSON201.Id}, *num.JSON200)
	return tenant{key: acct.ApiKey.Key, number: number, inbox: in}
}

// multipartInbound encodes an inbound fax as a multipart form.
func multipartInbound(t *testing.T, in adminapi.FaxInboundRequest) (string, *bytes.Buffer) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	require.NoError(t, w.WriteField("from", in.From))
	require.NoError(t, w.WriteField("to", in.To))
	require.NoError(t, w.WriteField("outcome", string(in.Outcome)))
	part, err := w.CreateFormFile("document", "fax.pdf")
	require.NoError(t, err)
	_, err = part.Write(in.Document)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return w.FormDataContentType(), &b
}

func TestInjectFaxInbound_DeliversTheFaxAndItsSignedEventsToTheApplication(t *testing.T) {
	env := startFax(t)
	tn := env.tenant(t, "acme", "+13125550150")
	tests := []struct {
		name       string
		outcome    adminapi.FaxInboundOutcome
		multipart  bool
		wantEvents []string
		wantStatus faxapi.FaxStatus
		wantReason *faxapi.FaxFailureReason
		partial    bool
	}{
		{"received, JSON with base64", adminapi.FaxInboundOutcomeReceived, false,
			[]string{"fax.receiving.started", "fax.media.processing.started", "fax.received"}, faxapi.FaxStatusReceived, nil, false},
		{"received, multipart form", adminapi.FaxInboundOutcomeReceived, true,
			[]string{"fax.receiving.started", "fax.media.processing.started", "fax.received"}, faxapi.FaxStatusReceived, nil, false},
		{"partial", adminapi.FaxInboundOutcomePartial, false,
			[]string{"fax.receiving.started", "fax.media.processing.started", "fax.received"}, faxapi.FaxStatusReceived, nil, true},
		{"failed", adminapi.FaxInboundOutcomeFailed, true,
			[]string{"fax.receiving.started", "fax.failed"}, faxapi.FaxStatusFailed, new(faxapi.FaxFailureReasonSenderCallDropped), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			req := adminapi.FaxInboundRequest{From: "+14155550123", To: tn.number, Document: env.pdf, Outcome: tt.outcome}
			var resp *adminapi.InjectFaxInboundResponse
			var err error
			if tt.multipart {
				ct, body := multipartInbound(t, req)
				resp, err = env.admin.InjectFaxInboundWithBodyWithResponse(ctx, ct, body)
			} else {
				resp, err = env.admin.InjectFaxInboundWithResponse(ctx, req)
			}
			require.NoError(t, err)
			require.Equal(t, http.StatusCreated, resp.StatusCode(), string(resp.Body))
			assert.Equal(t, 2, resp.JSON201.PageCount)
			assert.Equal(t, tt.outcome, resp.JSON201.Outcome)
			id := resp.JSON201.FaxId.String()

			require.Eventually(t, func() bool { return len(tn.inbox.typesOf(id)) == len(tt.wantEvents) }, 10*time.Second, 5*time.Millisecond)
			assert.Equal(t, tt.wantEvents, tn.inbox.typesOf(id))

			f, err := env.faxClient(t, tn.key).GetFax(ctx, id)
			require.NoError(t, err)
			assert.Equal(t, faxapi.FaxDirectionInbound, faxapi.FaxDirection(f.Direction))
			assert.Equal(t, tt.wantStatus, faxapi.FaxStatus(f.Status))
			var reason *faxapi.FaxFailureReason
			if f.FailureReason != nil {
				r := faxapi.FaxFailureReason(*f.FailureReason)
				reason = &r
			}
			assert.Equal(t, tt.wantReason, reason)
			assert.Equal(t, "+14155550123", f.From)
			if tt.wantStatus == faxapi.FaxStatusReceived {
				assert.Equal(t, &tt.partial, f.PartialContent)
				assert.Equal(t, 2, *f.PageCount)
			}
		})
	}
	// A delivery is recorded after the receiver answered it: wait for the
	// record of the last one, not just for its arrival.
	var stats adminapi.FaxWebhookStats
	require.Eventually(t, func() bool {
		resp, err := env.admin.GetFaxWebhookStatsWithResponse(context.Background())
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
		stats = *resp.JSON200
		return stats.Pending == 0
	}, 10*time.Second, 5*time.Millisecond)
	assert.Equal(t, adminapi.FaxWebhookStats{Delivered: 11}, stats)
}

func TestCreateFaxAPIKey_RotationRevokesTheReplacedKeyAtOnce(t *testing.T) {
	env := startFax(t)
	ctx := context.Background()
	acct := env.createAccount(t, "acme")
	first := acct.ApiKey
	assert.Equal(t, "acme", acct.Account.Name)
	require.Equal(t, http.StatusOK, env.keyStatus(t, first.Key), "the account's first key works")

	extra, err := env.admin.CreateFaxAPIKeyWithResponse(ctx, "acme", adminapi.FaxCreateAPIKeyRequest{})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, extra.StatusCode(), string(extra.Body))
	assert.Nil(t, extra.JSON201.Replaced)

	rotated, err := env.admin.CreateFaxAPIKeyWithResponse(ctx, "acme", adminapi.FaxCreateAPIKeyRequest{Replaces: &first.Id})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, rotated.StatusCode(), string(rotated.Body))
	assert.Equal(t, &first.Id, rotated.JSON201.Replaced)
	assert.NotEqual(t, first.Key, rotated.JSON201.Key)

	assert.Equal(t, http.StatusUnauthorized, env.keyStatus(t, first.Key), "the replaced key")
	assert.Equal(t, http.StatusOK, env.keyStatus(t, rotated.JSON201.Key), "the new key")
	assert.Equal(t, http.StatusOK, env.keyStatus(t, extra.JSON201.Key), "a key the rotation did not name")

	revoke, err := env.admin.RevokeFaxAPIKeyWithResponse(ctx, "acme", extra.JSON201.Id)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, revoke.StatusCode(), string(revoke.Body))
	assert.Equal(t, http.StatusUnauthorized, env.keyStatus(t, extra.JSON201.Key), "the revoked key")

	again, err := env.admin.CreateFaxAPIKeyWithResponse(ctx, "acme", adminapi.FaxCreateAPIKeyRequest{Replaces: &first.Id})
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, again.StatusCode(), "rotating a revoked key issues nothing")
}

func TestFaxAdmin_AnswersEachMistakeWithItsError(t *testing.T) {
	env := startFax(t)
	acme := env.tenant(t, "acme", "+13125550150")
	env.tenant(t, "globex", "+13125550160")
	ctx := context.Background()
	_, err := env.admin.CreateFaxAccountWithResponse(ctx, adminapi.FaxCreateAccountRequest{Name: "initech"})
	require.NoError(t, err)
	inbound := func(to string, doc []byte, outcome adminapi.FaxInboundOutcome) func() (int, []byte, error) {
		return func() (int, []byte, error) {
			return testkit.ReadAnswer(env.admin.ClientInterface.InjectFaxInbound(ctx, adminapi.FaxInboundRequest{From: "+14155550123", To: to, Document: doc, Outcome: outcome}))
		}
	}
	tests := []struct {
		name     string
		call     func() (int, []byte, error)
		wantCode int
		wantName adminapi.ErrorError
	}{
		{"an account name taken", func() (int, []byte, error) {
			return testkit.ReadAnswer(env.admin.ClientInterface.CreateFaxAccount(ctx, adminapi.FaxCreateAccountRequest{Name: "acme"}))
		}, http.StatusConflict, adminapi.ErrorErrorConflict},
		{"an unknown account", func() (int, []byte, error) {
			return testkit.ReadAnswer(env.admin.ClientInterface.GetFaxAccount(ctx, "nobody"))
		}, http.StatusNotFound, adminapi.ErrorErrorNotFound},
		{"another account's number", func() (int, []byte, error) {
			return testkit.ReadAnswer(env.admin.ClientInterface.SetFaxNumber(ctx, "initech", acme.number, adminapi.FaxSetNumberRequest{}))
		}, http.StatusConflict, adminapi.ErrorErrorConflict},
		{"another account's application", func() (int, []byte, error) {
			app := uuid.New()
			return testkit.ReadAnswer(env.admin.ClientInterface.SetFaxNumber(ctx, "initech", "+13125550170", adminapi.FaxSetNumberRequest{ApplicationId: &app}))
		}, http.StatusNotFound, adminapi.ErrorErrorNotFound},
		{"a number that is not E.164", func() (int, []byte, error) {
			return testkit.ReadAnswer(env.admin.ClientInterface.SetFaxNumber(ctx, "initech", "+1999", adminapi.FaxSetNumberRequest{}))
		}, http.StatusBadRequest, adminapi.ErrorErrorInvalidRequest},
		{"an unknown key to revoke", func() (int, []byte, error) {
			return testkit.ReadAnswer(env.admin.ClientInterface.RevokeFaxAPIKey(ctx, "acme", uuid.New()))
		}, http.StatusNotFound, adminapi.ErrorErrorNotFound},
		{"an inbound fax to a number on no application", inbound("+13125550199", env.pdf, adminapi.FaxInboundOutcomeReceived),
			http.StatusNotFound, adminapi.ErrorErrorNotFound},
		{"an inbound document that is not a PDF", inbound(acme.number, []byte("hello"), adminapi.FaxInboundOutcomeReceived),
			http.StatusBadRequest, adminapi.ErrorErrorInvalidRequest},
		{"an unknown inbound outcome", func() (int, []byte, error) {
			return testkit.ReadAnswer(env.raw.InjectFaxInbound(ctx, adminapi.FaxInboundRequest{From: "+14155550123", To: acme.number, Document: env.pdf, Outcome: "lost"}))
		},
			http.StatusBadRequest, adminapi.ErrorErrorInvalidRequest},
		{"an inbound fax as plain text", func() (int, []byte, error) {
			return testkit.ReadAnswer(env.raw.InjectFaxInboundWithBody(ctx, "text/plain", bytes.NewReader([]byte("fax"))))
		}, http.StatusUnsupportedMediaType, adminapi.ErrorErrorUnsupportedContentType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, err := tt.call()
			require.NoError(t, err)
			require.Equal(t, tt.wantCode, code, string(body))
			var e adminapi.Error
			require.NoError(t, json.Unmarshal(body, &e))
			assert.Equal(t, tt.wantCode, e.Code)
			assert.Equal(t, tt.wantName, e.Error)
			assert.NotEmpty(t, e.Message)
		})
	}
}

func TestFaxAdmin_RefusesCallsWithoutTheAdminToken(t *testing.T) {
	env := startFax(t)
	anon, err := adminapi.NewClientWithResponses(env.adminURL)
	require.NoError(t, err)
	r, err := anon.GetFaxWebhookPublicKeyWithResponse(context.Background())
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, r.StatusCode())
	assert.Nil(t, r.JSON200)
}

func TestGetFaxAccount_AnswersTheAccountCreated(t *testing.T) {
	env := startFax(t)
	ctx := context.Background()
	created := env.createAccount(t, "harbour")
	got, err := env.admin.GetFaxAccountWithResponse(ctx, "harbour")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, got.StatusCode(), string(got.Body))
	assert.Equal(t, created.Account.Id, got.JSON200.Id)
	assert.Equal(t, "harbour", got.JSON200.Name)
}
