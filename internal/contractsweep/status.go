package contractsweep

import (
	"io"
	"net/http"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/internal/contractcoverage"
	"github.com/apistack/apistack/protocol/contract"
)

// Sweep is one condition swept across an API's operations: each operation
// that declares the status wanted, and that Keep keeps, gets one request
// built from the spec.
type Sweep struct {
	// API is the API swept, at BaseURL.
	API     contract.API
	BaseURL string
	// Values are the parameters' values, by name.
	Values map[string]string
	// Body is the JSON body of an operation's request that takes one; nil
	// (or "") sends "{}" (contractcoverage.Operation.NewRequest).
	Body func(operationID string) string
	// Authorization, when set, is sent as the Authorization header.
	Authorization string
	// ContentType, when set, is sent as the body's Content-Type, and the
	// operations that take no body are left out.
	ContentType string
	// Keep, when set, keeps only the operations it reports.
	Keep func(doc *openapi3.T, op contractcoverage.Operation) bool
	// Transport carries the requests under the contract check; nil is
	// http.DefaultTransport.
	Transport http.RoundTripper
}

// Secured keeps the operations whose security matches secured.
func Secured(secured bool) func(doc *openapi3.T, op contractcoverage.Operation) bool {
	return func(doc *openapi3.T, op contractcoverage.Operation) bool { return op.Secured(doc) == secured }
}

// Status sends sw's requests and asserts each is answered want; the contract
// transport checks every answer against the spec (the requests are sent
// unchecked: a condition may break the spec on purpose). It fails t when no
// operation was swept, and returns how many were.
func Status(t *testing.T, want int, sw Sweep) int {
	t.Helper()
	doc, ops, err := contractcoverage.Operations(string(sw.API))
	require.NoError(t, err)
	next := sw.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	rt, err := contract.ForAPI(sw.API, next, contract.WithoutRequestValidation(),
		contract.OnViolation(func(v *contract.Violation) { t.Errorf("%v", v) }))
	require.NoError(t, err)
	client := &http.Client{Transport: rt}
	swept := 0
	for _, op := range ops {
		if !op.Declares(want) || (sw.Keep != nil && !sw.Keep(doc, op)) {
			continue
		}
		body := ""
		if sw.Body != nil {
			body = sw.Body(op.ID)
		}
		req, err := op.NewRequest(sw.BaseURL, sw.Values, body)
		require.NoError(t, err)
		if sw.ContentType != "" {
			if req.Body == nil {
				continue // the condition is about bodies
			}
			req.Header.Set("Content-Type", sw.ContentType)
		}
		if sw.Authorization != "" {
			req.Header.Set("Authorization", sw.Authorization)
		}
		swept++
		resp, err := client.Do(req)
		require.NoError(t, err, op.ID)
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, want, resp.StatusCode, "%s %s %s: %s", op.ID, req.Method, req.URL.Path, answer)
	}
	assert.NotZero(t, swept, "some operation declares %d", want)
	return swept
}
