package fax

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMediaLink_ASignatureWithAnotherLastCharacterIsRefused(t *testing.T) {
	h, r := newReceivingHarness(t)
	id := h.sendDoc("+14155550123", h.docs.URL+"/3-pages.pdf", true)
	r.waitFor(id, "fax.delivered")
	got, err := h.api.GetFaxWithResponse(context.Background(), uuid.MustParse(id))
	require.NoError(t, err)
	require.NotNil(t, got.JSON200.Data.StoredMediaUrl)
	u, err := url.Parse(*got.JSON200.Data.StoredMediaUrl)
	require.NoError(t, err)

	// A 32-byte HMAC is 43 unpadded base64 characters: the last one carries
	// four bits of the MAC and two unused bits. Changing only the unused bits
	// gives another string a lenient decoder reads as the same MAC.
	q := u.Query()
	sig := q.Get("signature")
	require.Len(t, sig, 43)
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := alphabet[strings.IndexByte(alphabet, sig[42])^1]
	altered := sig[:42] + string(last)
	lenientA, err := base64.RawURLEncoding.DecodeString(sig)
	require.NoError(t, err)
	lenientB, err := base64.RawURLEncoding.DecodeString(altered)
	require.NoError(t, err)
	require.Equal(t, lenientA, lenientB, "the altered signature decodes leniently to the same bytes")

	get := func(u string) int {
		resp, err := http.Get(u)
		require.NoError(t, err)
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusOK, get(u.String()))
	q.Set("signature", altered)
	u.RawQuery = q.Encode()
	assert.Equal(t, http.StatusForbidden, get(u.String()), "only the canonical encoding of the signature is accepted")
}
