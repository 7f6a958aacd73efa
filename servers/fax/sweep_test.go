package fax

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/internal/contractcoverage"
	"github.com/apistack/apistack/internal/contractsweep"
	"github.com/apistack/apistack/protocol/contract"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/internal/testkit"
)

// sweepBodies are well-formed bodies for the operations that take one,
// naming an unknown connection where they name one.
var sweepBodies = map[string]string{
	"SendFax":              `{"connection_id":"1","to":"+13125550199","from":"+13125550100","media_url":"http://127.0.0.1:9/doc.pdf"}`,
	"CreateFaxApplication": `{"application_name":"sweep","webhook_url":"http://127.0.0.1:9/","outbound":{"outbound_voice_profile_id":"1"}}`,
	"UpdateFaxApplication": `{"application_name":"sweep"}`,
}

// sweep sends one request to every operation declaring want (secured or
// not), built from the spec with values for its parameters and the given
// API key (none when empty), and asserts each is answered want; the
// middleware and the contract transport check every answer.
func (h *harness) sweep(t *testing.T, want int, values map[string]string, key string, secured bool, except ...string) {
	t.Helper()
	auth := ""
	if key != "" {
		auth = "Bearer " + key
	}
	contractsweep.Status(t, want, contractsweep.Sweep{
		API: contract.Fax, BaseURL: h.url, Values: values, Authorization: auth,
		Body: func(id string) string { return sweepBodies[id] },
		Keep: func(doc *openapi3.T, op contractcoverage.Operation) bool {
			return op.Secured(doc) == secured && !slices.Contains(except, op.ID)
		},
	})
}

func TestEveryOperation_WithoutAnAPIKeyAnswers401(t *testing.T) {
	h := newHarness(t)
	h.sweep(t, http.StatusUnauthorized, nil, "", true)
	h.sweep(t, http.StatusUnauthorized, nil, "KEY-not-a-real-one", true)
}

func TestEveryOperation_ForAnUnknownIDAnswers404(t *testing.T) {
	h := newHarness(t)
	// SendFax names its application and number in the body: an unknown one
	// is 422 invalid_parameter (testdata/contract/unreachable.yaml).
	h.sweep(t, http.StatusNotFound, map[string]string{"id": "0f4c2a1e-9b7d-4c3a-8e6f-5d4c3b2a1f0e"}, h.key, true, "SendFax")
}

func TestEveryOperation_WhenTheDatabaseFailsAnswers500(t *testing.T) {
	h := newHarness(t)
	testdb.DropTables(t, h.srv.cfg.DB)
	h.sweep(t, http.StatusInternalServerError, map[string]string{"id": "0f4c2a1e-9b7d-4c3a-8e6f-5d4c3b2a1f0e"}, h.key, true)
}

func TestEveryOperation_WhenTheDatabaseIsGoneAnswers503(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.srv.cfg.DB.Close())
	h.sweep(t, http.StatusServiceUnavailable, map[string]string{"id": "0f4c2a1e-9b7d-4c3a-8e6f-5d4c3b2a1f0e"}, h.key, true)
}

// rawStatus sends a request through the contract transport (request checks off) and
// returns the status.
func (h *harness) rawStatus(t *testing.T, method, path, contentType string, body []byte) int {
	t.Helper()
	rt, err := contract.ForAPI(contract.Fax, nil, contract.WithoutRequestValidation(),
		contract.OnViolation(func(v *contract.Violation) { t.Errorf("%v", v) }))
	require.NoError(t, err)
	resp, answer := testkit.Request{Method: method, URL: h.url + path, Token: h.key, Body: bytes.NewReader(body), ContentType: contentType,
		Client: &http.Client{Transport: rt}}.Do(t)
	t.Logf("%s %s: %d %s", method, path, resp.StatusCode, answer)
	return resp.StatusCode
}

func TestGetMedia_AnswersEachFailureWithItsStatus(t *testing.T) {
	h := newHarness(t)
	unknown := "0f4c2a1e-9b7d-4c3a-8e6f-5d4c3b2a1f0e"
	expires := h.clock.Now().Add(MediaLinkTTL).Unix()
	signed := fmt.Sprintf("/v2/media/%s?expires=%d&signature=%s", unknown, expires, h.srv.linkSignature(unknown, expires))
	assert.Equal(t, http.StatusNotFound, h.rawStatus(t, http.MethodGet, signed, "", nil), "a signed link to a document gone")
	assert.Equal(t, http.StatusUnprocessableEntity, h.rawStatus(t, http.MethodGet, "/v2/media/"+unknown+"?expires=soon&signature=x", "", nil))
	testdb.DropTables(t, h.srv.cfg.DB)
	assert.Equal(t, http.StatusInternalServerError, h.rawStatus(t, http.MethodGet, signed, "", nil), "the database failing")
	require.NoError(t, h.srv.cfg.DB.Close())
	assert.Equal(t, http.StatusServiceUnavailable, h.rawStatus(t, http.MethodGet, signed, "", nil), "the database gone")
}

func TestInvalidParametersAnswer422(t *testing.T) {
	h := newHarness(t)
	for _, path := range []string{"/v2/faxes/not-a-uuid", "/v2/faxes?page%5Bsize%5D=0", "/v2/fax_applications?page%5Bsize%5D=0"} {
		assert.Equal(t, http.StatusUnprocessableEntity, h.rawStatus(t, http.MethodGet, path, "", nil), path)
	}
	assert.Equal(t, http.StatusUnprocessableEntity, h.rawStatus(t, http.MethodPost, "/v2/fax_applications", "application/json", []byte(`{"application_name":""}`)))
}

func TestBodies_OfAnotherTypeOrOverTheLimitAreRefused(t *testing.T) {
	h := newHarness(t)
	big := bytes.Repeat([]byte("x"), 64<<10+1)
	for _, op := range []struct{ method, path string }{
		{http.MethodPost, "/v2/faxes"},
		{http.MethodPost, "/v2/fax_applications"},
		{http.MethodPatch, "/v2/fax_applications/" + h.app},
	} {
		assert.Equal(t, http.StatusUnsupportedMediaType, h.rawStatus(t, op.method, op.path, "text/plain", []byte("to=+13125550199")), op.path)
		assert.Equal(t, http.StatusRequestEntityTooLarge, h.rawStatus(t, op.method, op.path, "application/json", big), op.path)
	}
}

func TestEveryOperation_ForAMalformedIDAnswers422(t *testing.T) {
	h := newHarness(t)
	// Every operation on a path with a UUID parameter answers 422
	// invalid_parameter whose source.parameter names it; the contract
	// coverage sees the source of each. (A fax application's id is any
	// string: a malformed one is unknown, 404.)
	var sources []string
	transport := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		var e struct {
			Errors []struct {
				Source *struct{ Parameter string } `json:"source"`
			} `json:"errors"`
		}
		if json.Unmarshal(body, &e) == nil && len(e.Errors) == 1 && e.Errors[0].Source != nil {
			sources = append(sources, e.Errors[0].Source.Parameter)
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	})
	n := contractsweep.Status(t, http.StatusUnprocessableEntity, contractsweep.Sweep{
		API: contract.Fax, BaseURL: h.url, Authorization: "Bearer " + h.key, Transport: transport,
		Values: map[string]string{"id": "not-a-uuid", "media_id": "not-a-uuid"},
		Body:   func(id string) string { return sweepBodies[id] },
		Keep: func(_ *openapi3.T, op contractcoverage.Operation) bool {
			for _, p := range append(slices.Clone(op.Shared), op.Op.Parameters...) {
				if p.Value.In == openapi3.ParameterInPath && p.Value.Schema.Value.Format == "uuid" {
					return true
				}
			}
			return false
		},
	})
	assert.Len(t, sources, n, "each answer has a source")
	for _, s := range sources {
		assert.Contains(t, []string{"id", "media_id"}, s, "the source names the malformed parameter")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
