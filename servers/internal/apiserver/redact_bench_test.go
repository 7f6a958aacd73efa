package apiserver_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apistack/apistack/servers/internal/apiserver"
)

// redactBodies are typical journaled bodies: the benchmark's list answer
// (no secret), a token exchange and its answer, a fax sent with a media
// URL, and a menu with non-ASCII names.
func redactBodies() map[string][]byte {
	var groups strings.Builder
	groups.WriteString(`{"data":[`)
	for i := range 20 {
		if i > 0 {
			groups.WriteByte(',')
		}
		fmt.Fprintf(&groups, `{"name":"group-%02d","roles":["pam_reader"],"created_at":"2026-11-27T19:00:00Z","deleted_at":null}`, i)
	}
	groups.WriteString(`]}`)
	var menu strings.Builder
	menu.WriteString(`[`)
	for i := range 40 {
		if i > 0 {
			menu.WriteByte(',')
		}
		fmt.Fprintf(&menu, `{"guid":"7d3e6a1c-%04d","name":"Crème brûlée %d","sku":"CB-%d","orderableOnline":"YES"}`, i, i, i)
	}
	menu.WriteString(`]`)
	return map[string][]byte{
		"list":           []byte(groups.String()),
		"token-exchange": []byte(`{"key_id":"sk_0123456789abcdef","key_secret":"0123456789abcdef0123456789abcdef"}`),
		"token-answer":   []byte(`{"access_token":"pat_0123456789abcdef0123456789abcdef","token_type":"Bearer","expires_in":3600}`),
		"send-fax":       []byte(`{"connection_id":"c0ffee","to":"+13125550100","from":"+13125550199","media_url":"https://docs.example.com/a.pdf?sig=abc"}`),
		"menu":           []byte(menu.String()),
	}
}

// BenchmarkRedactBody measures what the journal's writer spends redacting
// one body, per kind of body.
func BenchmarkRedactBody(b *testing.B) {
	for name, body := range redactBodies() {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				_ = apiserver.RedactBody(body)
			}
		})
	}
}
