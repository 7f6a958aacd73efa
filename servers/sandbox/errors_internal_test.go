package sandbox

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/apistack/apistack/gen/sandboxapi"
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
