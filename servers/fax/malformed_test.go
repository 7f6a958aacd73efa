package fax

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"
)

// A body whose chunked framing breaks after a first chunk did not arrive
// whole: every operation that takes a body answers 400 invalid_parameter in
// the fax error body, and creates nothing. No client sends such a body, so
// the request is written on a connection of its own.
func TestBody_AMalformedChunkedBodyIs400OnEveryOperationThatTakesOne(t *testing.T) {
	h := newHarness(t)
	u, err := url.Parse(h.url)
	require.NoError(t, err)
	start := `{"application_name": "half`
	tests := []struct{ name, method, path string }{
		{"SendFax", http.MethodPost, "/v2/faxes"},
		{"CreateFaxApplication", http.MethodPost, "/v2/fax_applications"},
		{"UpdateFaxApplication", http.MethodPatch, "/v2/fax_applications/" + h.app},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
			require.NoError(t, err)
			defer conn.Close()
			require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
			_, err = fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
				"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\nzz\r\n", tt.method, tt.path, u.Host, h.key, len(start), start)
			require.NoError(t, err)
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
			var errs faxapi.Errors
			require.NoError(t, json.Unmarshal(body, &errs), "%s", body)
			require.NotEmpty(t, errs.Errors)
			assert.Contains(t, errs.Errors[0].Detail, "request body", "the message says what was wrong")
		})
	}

	apps, err := h.api.ListFaxApplicationsWithResponse(t.Context(), nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, apps.StatusCode())
	assert.Len(t, apps.JSON200.Data, 1, "nothing created: only the harness's application")
	got, err := h.api.GetFaxApplicationWithResponse(t.Context(), h.app)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, got.StatusCode())
	assert.NotEqual(t, "half", got.JSON200.Data.ApplicationName, "nothing changed")
	faxes, err := h.api.ListFaxesWithResponse(t.Context(), nil)
	require.NoError(t, err)
	assert.Empty(t, faxes.JSON200.Data, "nothing sent")
}
