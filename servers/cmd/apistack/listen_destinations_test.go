package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/egress/egresstest"
)

// TestListen_RefusesAForwardTargetOffLoopbackAndPublic: --forward-to may
// name the developer's own service on loopback, never a private, link-local
// or cloud-metadata address, however it is spelled; it is refused before
// the sandbox API is asked anything.
func TestListen_RefusesAForwardTargetOffLoopbackAndPublic(t *testing.T) {
	for _, s := range egresstest.Spellings {
		if s.Kind == egresstest.Loopback {
			require.NoError(t, forwardPolicy.Check(context.Background(), s.URL()), "%s: loopback is allowed", s.Name)
			continue
		}
		var out, errOut bytes.Buffer
		err := run(context.Background(), []string{"listen", "--sandbox", "sbx-none", "--forward-to", s.URL(),
			"--url", "http://127.0.0.1:1", "--token", "t"}, &out, &errOut)
		require.Error(t, err, "%s: %s", s.Name, s.URL())
		assert.Contains(t, err.Error(), "--forward-to", s.Name)
		assert.NotContains(t, errOut.String(), "forwarding the webhooks", "%s: refused before listening", s.Name)
	}
}
