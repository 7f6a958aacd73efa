package pagetoken_test

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/pagetoken"
)

type position struct {
	After string `json:"after"`
	N     int    `json:"n"`
}

func newCodec(t *testing.T) *pagetoken.Codec {
	t.Helper()
	c, err := pagetoken.New(bytes.Repeat([]byte{7}, 32))
	require.NoError(t, err)
	return c
}

func TestCodec_RoundTrip(t *testing.T) {
	c := newCodec(t)
	token, err := c.Encode("groups:acme", position{After: "ops", N: 3})
	require.NoError(t, err)
	var got position
	require.NoError(t, c.Decode("groups:acme", token, &got))
	assert.Equal(t, position{After: "ops", N: 3}, got)
}

func TestCodec_RefusesTokensOfAnotherScopeOrKey(t *testing.T) {
	c := newCodec(t)
	token, err := c.Encode("groups:acme", position{After: "ops"})
	require.NoError(t, err)
	var got position
	assert.ErrorIs(t, c.Decode("groups:other", token, &got), pagetoken.ErrInvalid)
	other, err := pagetoken.New(bytes.Repeat([]byte{8}, 32))
	require.NoError(t, err)
	assert.ErrorIs(t, other.Decode("groups:acme", token, &got), pagetoken.ErrInvalid)
	_, err = pagetoken.New(make([]byte, 31))
	assert.Error(t, err, "a short key")
}

// Every token has one spelling: changing any character, the last one of each
// part included (whose low bits base64 does not use), makes it invalid.
// A lenient decoder accepted a last character differing in those bits.
func TestCodec_EveryEditedCharacterIsRefused(t *testing.T) {
	c := newCodec(t)
	// Payload lengths that leave 2 and 4 unused bits in the last character.
	for _, after := range []string{"a", "ab", "abc", "abcd"} {
		token, err := c.Encode("scope", position{After: after})
		require.NoError(t, err)
		payload, mac, ok := strings.Cut(token, ".")
		require.True(t, ok)
		for i := range token {
			for _, r := range base64URLAlphabet {
				if byte(r) == token[i] {
					continue
				}
				edited := token[:i] + string(r) + token[i+1:]
				var got position
				assert.ErrorIs(t, c.Decode("scope", edited, &got), pagetoken.ErrInvalid,
					"token %q edited at %d (payload %d, mac %d characters) to %q", token, i, len(payload), len(mac), edited)
			}
		}
	}
}

func TestCodec_RefusesMalformedTokens(t *testing.T) {
	c := newCodec(t)
	token, err := c.Encode("scope", position{After: "x"})
	require.NoError(t, err)
	payload, mac, _ := strings.Cut(token, ".")
	for name, bad := range map[string]string{
		"empty":            "",
		"no dot":           payload + mac,
		"padded":           payload + "=." + mac,
		"standard base64":  strings.NewReplacer("-", "+", "_", "/").Replace(token) + "+",
		"two dots":         token + ".x",
		"payload not JSON": base64.RawURLEncoding.EncodeToString([]byte("nope")) + "." + mac,
	} {
		var got position
		assert.ErrorIs(t, c.Decode("scope", bad, &got), pagetoken.ErrInvalid, name)
	}
}

const base64URLAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
