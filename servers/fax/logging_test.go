package fax

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/safebuf"
)

func TestDelivery_FailuresAreLoggedWithoutTheSecretsOfTheURLs(t *testing.T) {
	var logs safebuf.Buffer
	h := newHarness(t, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	failover := newReceiver(t, h)
	// Port 9 (discard) refuses connections: every attempt on the webhook URL
	// fails and is logged.
	h.useReceivers("http://hook-user:hook-password@127.0.0.1:9/?token=primary-secret", failover.url+"?token=failover-secret")

	id := h.send("+14155550123")
	failover.waitFor(id, "fax.delivered")
	h.stop()

	out := logs.String()
	require.True(t, strings.Contains(out, "giving up on a URL"), "the failures are logged:\n%s", out)
	for _, secret := range []string{"primary-secret", "hook-password", "failover-secret"} {
		assert.NotContains(t, out, secret, "a secret of a webhook URL is logged")
	}
}

func TestSend_DownloadFailuresAreLoggedWithoutTheSecretsOfTheMediaURL(t *testing.T) {
	var logs safebuf.Buffer
	h := newHarness(t, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	r := newReceiver(t, h)
	h.useReceivers(r.url, "")

	// A presigned document URL whose server refuses connections.
	id := h.sendDoc("+14155550123", "http://doc-user:doc-password@127.0.0.1:9/fax.pdf?X-Amz-Signature=media-secret", false)
	r.waitFor(id, "fax.failed")
	h.stop()

	out := logs.String()
	require.True(t, strings.Contains(out, "download failed"), "the failure is logged:\n%s", out)
	for _, secret := range []string{"media-secret", "doc-password"} {
		assert.NotContains(t, out, secret, "a secret of the media URL is logged")
	}
}
