package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSandboxCommand_UsageListsEveryCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	_ = run(context.Background(), []string{"sandbox", "-h"}, &out, &errOut)
	usage := errOut.String()
	for _, cmd := range []string{"create", "get ID", "requests", "webhooks", "redeliver ID EVENT_ID", "inbound-fax", "advance ID DURATION",
		"clock ID", "faults add|list|clear", "reset ID", "delete ID"} {
		assert.Contains(t, usage, "\n  "+cmd, "apistack sandbox -h does not list %q", cmd)
	}
	assert.Contains(t, usage, "apistack listen --sandbox ID --forward-to URL")
}

func TestSandboxCommand_InboundFaxWebhooksAndRedeliver(t *testing.T) {
	dataDir := t.TempDir()
	_, _, stop := startServe(t, dataDir)
	defer func() { require.NoError(t, stop()) }()
	out, err := sandboxCLI(t, "--data-dir", dataDir, "create")
	require.NoError(t, err)
	var created struct {
		ID    string `json:"id"`
		Token string `json:"token"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &created), out)
	own := []string{"--data-dir", dataDir, "--sandbox-token", created.Token}

	out, err = sandboxCLI(t, append(own, "inbound-fax", "--pages", "2", "--from", "+14155550199", created.ID)...)
	require.NoError(t, err)
	var inbound struct {
		FaxID string `json:"fax_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &inbound), out)
	require.NotEmpty(t, inbound.FaxID)

	// The first delivery of its events, long-polled.
	out, err = sandboxCLI(t, append(own, "webhooks", "--wait", "30s", created.ID)...)
	require.NoError(t, err)
	var log struct {
		Data []struct {
			Event struct {
				ID    string `json:"id"`
				FaxID string `json:"fax_id"`
			} `json:"event"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &log), out)
	require.NotEmpty(t, log.Data)
	ev := log.Data[0].Event
	assert.Equal(t, inbound.FaxID, ev.FaxID)

	out, err = sandboxCLI(t, append(own, "redeliver", created.ID, ev.ID)...)
	require.NoError(t, err)
	var copyOf struct {
		ID           string `json:"id"`
		RedeliveryOf int64  `json:"redelivery_of"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &copyOf), out)
	assert.Equal(t, ev.ID, copyOf.ID)
	assert.NotZero(t, copyOf.RedeliveryOf)

	// Bad arguments call nothing.
	for _, args := range [][]string{
		{"redeliver", created.ID}, {"redeliver", created.ID, "not-a-uuid"}, {"inbound-fax"}, {"inbound-fax", "a", "b"},
	} {
		_, err := sandboxCLI(t, append(own, args...)...)
		assert.Error(t, err, "%q", args)
	}
	_, err = sandboxCLI(t, append(own, "inbound-fax", "--outcome", "lost", created.ID)...)
	assert.ErrorContains(t, err, "400")
}
