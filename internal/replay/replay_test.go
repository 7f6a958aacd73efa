package replay

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWithBody_EachCloneCarriesTheBodyAgain(t *testing.T) {
	req, err := http.NewRequest(http.MethodPost, "http://example.invalid/x", strings.NewReader("payload"))
	require.NoError(t, err)
	body, err := ReadBody(req)
	require.NoError(t, err)
	assert.Equal(t, "payload", string(body))

	for range 2 {
		r := WithBody(req, body)
		assert.Equal(t, int64(7), r.ContentLength)
		got, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		assert.Equal(t, "payload", string(got))
		again, err := r.GetBody()
		require.NoError(t, err)
		got, _ = io.ReadAll(again)
		assert.Equal(t, "payload", string(got))
	}
}

func TestWithBody_NoBody(t *testing.T) {
	req, err := http.NewRequest(http.MethodGet, "http://example.invalid/x", nil)
	require.NoError(t, err)
	body, err := ReadBody(req)
	require.NoError(t, err)
	assert.Nil(t, body)
	r := WithBody(req, body)
	assert.Equal(t, http.NoBody, r.Body)
	assert.Zero(t, r.ContentLength)
}
