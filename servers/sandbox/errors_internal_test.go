package sandbox

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/validation"
)

func TestBodyText_TextOrBase64(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in        []byte
		truncated bool
		want      string
		enc       sandboxapi.BodyEncoding
	}{
		{"text", []byte("héllo"), false, "héllo", sandboxapi.BodyEncodingUtf8},
		{"a cut character", []byte("hé")[:2], true, "h", sandboxapi.BodyEncodingUtf8},
		{"binary", []byte{0x25, 0x50, 0xff, 0xfe}, false, "JVD//g==", sandboxapi.BodyEncodingBase64},
		{"empty", nil, false, "", sandboxapi.BodyEncodingUtf8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, enc := bodyText(tc.in, tc.truncated)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.enc, enc)
		})
	}
}

// The sandbox API answers through the error handler every API shares: each
// failure of the spec validation in its own body, a stalled body 408, a
// caller gone away a bare 499, anything unexpected 500 without detail.
func TestErrorHandler_AnswersInTheSandboxBody(t *testing.T) {
	s := &Server{logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, tc := range []struct {
		name   string
		err    error
		status int
		body   string
	}{
		{"unauthenticated", &validation.Failure{Kind: validation.KindUnauthenticated, Message: "no token"}, http.StatusUnauthorized, `"error":"unauthorized"`},
		{"invalid", &validation.Failure{Kind: validation.KindInvalid, Message: "ttl is not a duration"}, http.StatusBadRequest, `"error":"invalid_request"`},
		{"unsupported media type", &validation.Failure{Kind: validation.KindUnsupportedMediaType, Message: "text/plain"}, http.StatusUnsupportedMediaType, `"error":"unsupported_content_type"`},
		{"no such path", &validation.Failure{Kind: validation.KindNotFound, Message: "no route"}, http.StatusNotFound, `"error":"not_found"`},
		{"too large", &validation.Failure{Kind: validation.KindTooLarge, Message: "over 1 MiB"}, http.StatusRequestEntityTooLarge, `"error":"invalid_request"`},
		{"stalled body", &validation.Failure{Kind: validation.KindTimeout, Message: "the body did not arrive within the read timeout"}, http.StatusRequestTimeout, `"error":"request_timeout"`},
		{"the API's own", errForbidden("not yours"), http.StatusForbidden, `"message":"not yours"`},
		{"caller gone", context.Canceled, apiserver.StatusClientClosedRequest, ""},
		{"unexpected", errors.New("disk on fire"), http.StatusInternalServerError, `"error":"internal"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			c := echo.New().NewContext(httptest.NewRequest(http.MethodPost, "/sandboxes", nil), rec)
			s.errorHandler(tc.err, c)
			assert.Equal(t, tc.status, rec.Code)
			assert.Contains(t, rec.Body.String(), tc.body)
			assert.NotContains(t, rec.Body.String(), "disk on fire", "no internal detail")
		})
	}
}
