// Package contractsweep sweeps a condition across every operation of an
// API's spec, for tests proving that each operation declaring a status
// answers it, in its declared shape.
package contractsweep

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/internal/contractcoverage"
	"github.com/apistack/apistack/protocol/contract"
)

// TooLarge sends every operation of api that declares 413 a JSON body one
// byte over limit(operationId), with the given parameter values and
// Authorization header, and asserts each answers 413; the contract
// transport checks every answer against the spec. The requests say
// "Expect: 100-continue", so a server refusing a body by its Content-Length
// answers before the body is sent and no reset can hide the answer. It
// returns how many operations it swept; none declaring 413 skips the test.
func TooLarge(t *testing.T, api contract.API, baseURL string, values map[string]string, authorization string, limit func(operationID string) int64) int {
	t.Helper()
	doc, ops, err := contractcoverage.Operations(string(api))
	require.NoError(t, err)
	next := http.DefaultTransport.(*http.Transport).Clone()
	next.ExpectContinueTimeout = time.Minute
	rt, err := contract.ForAPI(api, next, contract.WithoutRequestValidation(),
		contract.OnViolation(func(v *contract.Violation) { t.Errorf("%v", v) }))
	require.NoError(t, err)
	client := &http.Client{Transport: rt}
	swept := 0
	for _, op := range ops {
		rb := op.Op.RequestBody
		if !op.Declares(http.StatusRequestEntityTooLarge) || rb == nil || rb.Value == nil {
			continue
		}
		swept++
		size := limit(op.ID) + 1
		body := make([]byte, size)
		copy(body, `{"padding":"`)
		for i := len(`{"padding":"`); i < len(body)-2; i++ {
			body[i] = 'x'
		}
		copy(body[len(body)-2:], `"}`)
		req, err := op.NewRequest(baseURL, values, "{}")
		require.NoError(t, err)
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = size
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Expect", "100-continue")
		if authorization != "" && op.Secured(doc) {
			req.Header.Set("Authorization", authorization)
		}
		resp, err := client.Do(req)
		require.NoError(t, err, op.ID)
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "%s %s %s with %s bytes: %.300s",
			op.ID, req.Method, req.URL.Path, strconv.FormatInt(size, 10), answer)
	}
	if swept == 0 {
		t.Skipf("no operation of the %s spec declares 413", api)
	}
	return swept
}
