package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	faxclient "github.com/apistack/apistack/clients/fax"
	"github.com/apistack/apistack/internal/docblocks"
	"github.com/apistack/apistack/servers/internal/safebuf"
)

// sandboxCLI runs `apistack sandbox args...` and returns its output.
func sandboxCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), append([]string{"sandbox"}, args...), &out, &errOut)
	return out.String(), err
}

func TestSandboxCommand_CreateGetRequestsResetDelete(t *testing.T) {
	dataDir := t.TempDir()
	creds, _, stop := startServe(t, dataDir)
	defer func() { require.NoError(t, stop()) }()
	require.Contains(t, creds, "sandboxes")
	require.Equal(t, creds["admin"]["base_url"], creds["sandboxes"]["base_url"])

	// create: the creator token of demo-credentials.json by default.
	out, err := sandboxCLI(t, "--data-dir", dataDir, "create", "--clock", "frozen", "--ttl", "20m")
	require.NoError(t, err)
	var created struct {
		ID          string                       `json:"id"`
		Token       string                       `json:"token"`
		Clock       string                       `json:"clock"`
		TTL         string                       `json:"ttl"`
		Credentials map[string]map[string]string `json:"credentials"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &created), out)
	assert.Equal(t, "frozen", created.Clock)
	assert.Equal(t, "20m0s", created.TTL)
	for _, section := range []string{"pam", "fax", "storage", "restaurant"} {
		assert.ElementsMatch(t, sectionKeys[section], keys(created.Credentials[section]), section)
	}
	own := []string{"--data-dir", dataDir, "--sandbox-token", created.Token}

	// The creator token does nothing but create.
	_, err = sandboxCLI(t, "--data-dir", dataDir, "get", created.ID)
	require.ErrorContains(t, err, "403")

	out, err = sandboxCLI(t, append(own, "get", created.ID)...)
	require.NoError(t, err)
	assert.Contains(t, out, created.Credentials["pam"]["key_id"])

	// A request of its credentials shows in requests, filtered.
	exchange(t, created.Credentials["pam"])
	out, err = sandboxCLI(t, append(own, "requests", "--api", "pam", "--operation", "IssueServiceToken", "--status", "200", created.ID)...)
	require.NoError(t, err)
	var page struct {
		Data []map[string]any `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &page), out)
	require.Len(t, page.Data, 1)
	assert.NotContains(t, out, created.Credentials["pam"]["key_secret"], "the journal redacts the key secret")

	out, err = sandboxCLI(t, append(own, "reset", created.ID)...)
	require.NoError(t, err)
	assert.Contains(t, out, created.ID)
	out, err = sandboxCLI(t, append(own, "requests", created.ID)...)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(out), &page))
	assert.Empty(t, page.Data, "a reset empties the journal")

	out, err = sandboxCLI(t, append(own, "delete", created.ID)...)
	require.NoError(t, err)
	assert.Empty(t, strings.TrimSpace(out))
	_, err = sandboxCLI(t, append(own, "get", created.ID)...)
	require.ErrorContains(t, err, "401", "a deleted sandbox's token stops working")

	// Bad arguments call nothing.
	for _, args := range [][]string{
		{"get"}, {"get", "a", "b"}, {"create", "extra"}, {"requests", "--since", "yesterday", created.ID}, {"launch"},
	} {
		_, err := sandboxCLI(t, append([]string{"--data-dir", dataDir}, args...)...)
		assert.Error(t, err, "%q", args)
	}
	_, err = sandboxCLI(t, "--data-dir", dataDir, "create", "--ttl", "5s")
	require.ErrorContains(t, err, "400")
}

// exchange trades a PAM key of creds for a token, over HTTP.
func exchange(t *testing.T, creds map[string]string) {
	t.Helper()
	body := `{"key_id":"` + creds["key_id"] + `","key_secret":"` + creds["key_secret"] + `"}`
	cmd := exec.Command("curl", "-sf", "-X", "POST", creds["base_url"]+"/v1/teams/"+creds["team"]+"/service_token",
		"-H", "Content-Type: application/json", "-d", body)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestDocs_SandboxExample runs the sandboxes guide's CI job, as written,
// against `apistack serve --demo`.
func TestDocs_SandboxExample(t *testing.T) {
	dir, creds := docsDir(t, "bash", "curl", "jq")
	docblocks.Run(t, "docs/sandboxes.md", "sandbox-example", dir)

	// It left nothing: the sandbox it made is gone.
	var sb struct {
		ID string `json:"id"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "sandbox.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &sb))
	_, err = sandboxCLI(t, "--sandbox-url", creds["admin"]["base_url"], "--sandbox-token", creds["admin"]["token"], "get", sb.ID)
	require.ErrorContains(t, err, "404")
}

func TestSandboxCreatorToken_DerivedFromTheAdminToken(t *testing.T) {
	a := sandboxCreatorToken("adm_one")
	assert.Equal(t, a, sandboxCreatorToken("adm_one"), "every replica derives the same")
	assert.NotEqual(t, a, sandboxCreatorToken("adm_two"))
	assert.NotContains(t, a, "adm_one")
	assert.True(t, strings.HasPrefix(a, "sbc_"))
}

func TestSandboxCommand_AdvanceAndClock(t *testing.T) {
	dataDir := t.TempDir()
	_, _, stop := startServe(t, dataDir)
	defer func() { require.NoError(t, stop()) }()
	out, err := sandboxCLI(t, "--data-dir", dataDir, "create", "--clock", "frozen")
	require.NoError(t, err)
	var created struct {
		ID    string    `json:"id"`
		Token string    `json:"token"`
		Now   time.Time `json:"now"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &created), out)
	own := []string{"--data-dir", dataDir, "--sandbox-token", created.Token}
	type clockView struct {
		Mode   string    `json:"mode"`
		Now    time.Time `json:"now"`
		Offset string    `json:"offset"`
	}
	read := func(out string) clockView {
		var c clockView
		require.NoError(t, json.Unmarshal([]byte(out), &c), out)
		return c
	}

	out, err = sandboxCLI(t, append(own, "clock", created.ID)...)
	require.NoError(t, err)
	assert.Equal(t, clockView{Mode: "frozen", Now: created.Now, Offset: read(out).Offset}, read(out))

	out, err = sandboxCLI(t, append(own, "advance", created.ID, "1h30m")...)
	require.NoError(t, err)
	assert.Equal(t, created.Now.Add(90*time.Minute), read(out).Now)

	to := created.Now.Add(48 * time.Hour).UTC()
	out, err = sandboxCLI(t, append(own, "advance", "--set", to.Format(time.RFC3339Nano), created.ID)...)
	require.NoError(t, err)
	assert.Equal(t, to, read(out).Now)

	// Bad arguments call nothing; the API refuses going back.
	for _, args := range [][]string{
		{"advance", created.ID}, {"advance", created.ID, "ten"}, {"advance", created.ID, "1m", "2m"},
		{"advance", "--set", "tomorrow", created.ID}, {"advance", "--set", to.Format(time.RFC3339), created.ID, "1m"},
		{"clock"}, {"clock", "--set", to.Format(time.RFC3339), created.ID},
	} {
		_, err := sandboxCLI(t, append(own, args...)...)
		assert.Error(t, err, "%q", args)
	}
	_, err = sandboxCLI(t, append(own, "advance", "--set", created.Now.Format(time.RFC3339Nano), created.ID)...)
	require.ErrorContains(t, err, "400")
	_, err = sandboxCLI(t, append(own, "advance", created.ID, "-1m")...)
	require.ErrorContains(t, err, "400")
	out, err = sandboxCLI(t, append(own, "clock", created.ID)...)
	require.NoError(t, err)
	assert.Equal(t, to, read(out).Now, "refused changes changed nothing")
}

// TestDocs_SandboxClockExample runs the sandboxes guide's clock example, as
// written, against `apistack serve --demo`.
func TestDocs_SandboxClockExample(t *testing.T) {
	dir, _ := docsDir(t, "bash", "curl", "jq")
	out := docblocks.Run(t, "docs/sandboxes.md", "sandbox-clock-example", dir)
	assert.Contains(t, out, "true", "the fax was delivered when the advance answered")
}

// TestDocs_SandboxFaultsExample runs the sandboxes guide's faults example,
// as written, against `apistack serve --demo`, then the same faults through
// `apistack sandbox faults`.
func TestDocs_SandboxFaultsExample(t *testing.T) {
	dir, creds := docsDir(t, "bash", "curl", "jq")
	docblocks.Run(t, "docs/sandboxes.md", "sandbox-faults-example", dir)
	dataDir := filepath.Join(dir, "data")
	var fault struct {
		ID    string `json:"id"`
		Count int    `json:"count"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "fault.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &fault))
	assert.Equal(t, 2, fault.Count)
	assert.True(t, strings.HasPrefix(fault.ID, "flt-"))

	// The CLI: add, list, clear one, clear all.
	text, err := sandboxCLI(t, "--data-dir", dataDir, "create")
	require.NoError(t, err)
	var sb struct {
		ID    string `json:"id"`
		Token string `json:"token"`
	}
	require.NoError(t, json.Unmarshal([]byte(text), &sb))
	own := []string{"--sandbox-url", creds["sandboxes"]["base_url"], "--sandbox-token", sb.Token, "faults"}
	text, err = sandboxCLI(t, append(own, "add", "--api", "pam", "--operation", "ListGroups", "--count", "3", "--retry-after", "2s", sb.ID, "rate-limited")...)
	require.NoError(t, err)
	var added struct {
		ID, Kind, Operation string
		Count               int
		RetryAfter          string `json:"retry_after"`
	}
	require.NoError(t, json.Unmarshal([]byte(text), &added), text)
	assert.Equal(t, "rate-limited", added.Kind)
	assert.Equal(t, "ListGroups", added.Operation)
	assert.Equal(t, 3, added.Count)
	assert.Equal(t, "2s", added.RetryAfter)
	_, err = sandboxCLI(t, append(own, "add", "--attempt", "2", sb.ID, "webhook-fail")...)
	require.NoError(t, err)
	_, err = sandboxCLI(t, append(own, "add", "--api", "pam", "--operation", "NoSuchOperation", sb.ID, "drop")...)
	require.ErrorContains(t, err, "NoSuchOperation")
	list := func() []map[string]any {
		text, err := sandboxCLI(t, append(own, "list", sb.ID)...)
		require.NoError(t, err)
		var page struct{ Data []map[string]any }
		require.NoError(t, json.Unmarshal([]byte(text), &page), text)
		return page.Data
	}
	require.Len(t, list(), 2)
	_, err = sandboxCLI(t, append(own, "clear", sb.ID, added.ID)...)
	require.NoError(t, err)
	left := list()
	require.Len(t, left, 1)
	assert.Equal(t, "webhook-fail", left[0]["kind"])
	_, err = sandboxCLI(t, append(own, "clear", sb.ID)...)
	require.NoError(t, err)
	assert.Empty(t, list())
	_, err = sandboxCLI(t, append(own, "explode", sb.ID)...)
	require.ErrorContains(t, err, "unknown faults command")
}

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

// freeAddrs returns n loopback addresses free right now.
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		out = append(out, l.Addr().String())
		require.NoError(t, l.Close())
	}
	return out
}

// createdSandbox is what `apistack sandbox create` prints, as the tests
// read it.
type createdSandbox struct {
	ID          string                       `json:"id"`
	Token       string                       `json:"token"`
	Credentials map[string]map[string]string `json:"credentials"`
}

// awaitEvent reads deliveries from events until one of fax faxID of type
// typ arrives.
func awaitEvent(t *testing.T, events <-chan faxclient.Event, faxID, typ string) faxclient.Event {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case e := <-events:
			if e.FaxID == faxID && e.Type == typ {
				return e
			}
		case <-timeout:
			t.Fatalf("no %s of fax %s forwarded", typ, faxID)
		}
	}
}

func TestListen_ForwardsEachDeliveryVerifiableAndResumesAcrossARestart(t *testing.T) {
	dataDir := t.TempDir()
	addrs := freeAddrs(t, 5)
	fixed := []string{"--pam-addr", addrs[0], "--fax-addr", addrs[1], "--storage-addr", addrs[2], "--restaurant-addr", addrs[3], "--admin-addr", addrs[4]}
	creds, _, stop := startServe(t, dataDir, fixed...)
	running := true
	defer func() {
		if running {
			require.NoError(t, stop())
		}
	}()
	adminURL := creds["admin"]["base_url"]

	out, err := sandboxCLI(t, "--data-dir", dataDir, "create")
	require.NoError(t, err)
	var sb createdSandbox
	require.NoError(t, json.Unmarshal([]byte(out), &sb), out)
	l := listenTo(t, sb, adminURL)
	events, lout, lerr, send := l.events, l.out, l.err, l.send
	first := send()
	awaitEvent(t, events, first, "fax.queued")

	// The remote side goes away and comes back on the same addresses and
	// database: listen waits, then resumes where it was.
	require.NoError(t, stop())
	running = false
	require.Eventually(t, func() bool { return strings.Contains(lerr.String(), "unreachable") }, 30*time.Second, 10*time.Millisecond, lerr.String())
	_, _, stop = startServe(t, dataDir, fixed...)
	running = true
	second := send()
	e := awaitEvent(t, events, second, "fax.queued")
	// The receiver answered; listen prints the line once it has the answer.
	want := lineOf(e.Type, e.ID, e.Attempt) + " -> 204 No Content"
	require.Eventually(t, func() bool { return strings.Contains(lout.String(), want) }, 30*time.Second, 10*time.Millisecond, lout.String())
	assert.Contains(t, lerr.String(), "back; resuming")
	require.NoError(t, l.stop())

	// One line per forward, each accepted by the verifying receiver, none
	// forwarded twice, each a delivery of the log.
	page := webhookLogOf(t, "--data-dir", dataDir, "--sandbox-token", sb.Token, "webhooks", "--limit", "1000", sb.ID)
	logged := map[string]bool{}
	for _, a := range page.Data {
		logged[lineOf(a.Event.Type, a.Event.ID, a.Attempt)] = true
	}
	lines := strings.Split(strings.TrimSpace(lout.String()), "\n")
	require.GreaterOrEqual(t, len(lines), 2, lout.String())
	seen := map[string]bool{}
	for _, l := range lines {
		head, status, ok := strings.Cut(l, " -> ")
		require.True(t, ok, l)
		assert.Equal(t, "204 No Content", status, l)
		assert.False(t, seen[head], "forwarded twice: %s", l)
		seen[head] = true
		assert.True(t, logged[head], "not a delivery of the log: %s", l)
	}
}

// lineOf is how listen names a forwarded delivery.
func lineOf(typ, id string, attempt int) string {
	return fmt.Sprintf("%s %s (attempt %d)", typ, id, attempt)
}

// verifyingReceiver is a local webhook receiver that verifies every
// delivery with the base64 public key as a real one would, and hands the
// events it accepted to the channel.
func verifyingReceiver(t *testing.T, publicKey string) (*httptest.Server, <-chan faxclient.Event) {
	t.Helper()
	key, err := faxclient.ParseWebhookPublicKey(publicKey)
	require.NoError(t, err)
	events := make(chan faxclient.Event, 100)
	receiver, err := faxclient.NewWebhookHandler(key, func(_ context.Context, e faxclient.Event) error {
		events <- e
		return nil
	})
	require.NoError(t, err)
	local := httptest.NewServer(receiver)
	t.Cleanup(local.Close)
	return local, events
}

// TestDocs_SandboxWebhooksExample runs the sandboxes guide's webhook log
// example, then its listen line, as written, against `apistack serve --demo`.
func TestDocs_SandboxWebhooksExample(t *testing.T) {
	// The curl block: reads the log, redelivers.
	dir, creds := docsDir(t, "bash", "curl", "jq")
	docblocks.Run(t, "docs/sandboxes.md", "sandbox-webhooks-example", dir)
	var sb createdSandbox
	data, err := os.ReadFile(filepath.Join(dir, "sandbox.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &sb))
	defer func() {
		_, err := sandboxCLI(t, "--sandbox-url", creds["admin"]["base_url"], "--sandbox-token", sb.Token, "delete", sb.ID)
		assert.NoError(t, err)
	}()

	// The listen block (its PATH line finds the binary in dir/bin),
	// forwarding to a receiver that verifies each delivery: the redelivered
	// event arrives twice, each signed anew.
	local, events := verifyingReceiver(t, sb.Credentials["fax"]["webhook_public_key"])
	listenOut := &safebuf.Buffer{}
	listen := exec.Command("bash", "-euo", "pipefail", "-c", docblocks.Block(t, "docs/sandboxes.md", "sandbox-listen-example"))
	listen.Dir = dir
	listen.Env = append(os.Environ(),
		"SBX_URL="+creds["admin"]["base_url"], "SBX_ID="+sb.ID, "SBX_TOKEN="+sb.Token, "LOCAL_URL="+local.URL+"/fax-webhooks")
	listen.Stdout, listen.Stderr = listenOut, listenOut
	// The block runs in a process group of its own: Ctrl-C, as a reader
	// stops it, reaches bash and apistack listen alike.
	listen.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, listen.Start())
	defer func() {
		_ = syscall.Kill(-listen.Process.Pid, syscall.SIGINT)
		_ = listen.Wait()
	}()
	var queued []faxclient.Event
	timeout := time.After(60 * time.Second)
	for len(queued) < 2 {
		select {
		case e := <-events:
			if e.Type == "fax.queued" {
				queued = append(queued, e)
			}
		case <-timeout:
			t.Fatalf("listen forwarded %d fax.queued deliveries: %s", len(queued), listenOut.String())
		}
	}
	assert.Equal(t, queued[0].ID, queued[1].ID, "the redelivery is the same event")
	require.Eventually(t, func() bool {
		return strings.Count(listenOut.String(), "fax.queued "+queued[0].ID) == 2
	}, 30*time.Second, 10*time.Millisecond, listenOut.String())
	assert.Contains(t, listenOut.String(), "-> 204 No Content")
}

// listen forwards each event once, as `stripe listen` does: an event whose
// delivery failed on the remote side and was retried there is forwarded
// by its first attempt only.
func TestListen_ForwardsEachEventOnceWhateverItsRetries(t *testing.T) {
	dataDir := t.TempDir()
	creds, _, stop := startServe(t, dataDir)
	defer func() { require.NoError(t, stop()) }()
	adminURL := creds["admin"]["base_url"]
	out, err := sandboxCLI(t, "--data-dir", dataDir, "create", "--clock", "frozen")
	require.NoError(t, err)
	var sb createdSandbox
	require.NoError(t, json.Unmarshal([]byte(out), &sb), out)
	own := []string{"--sandbox-url", adminURL, "--sandbox-token", sb.Token}
	// The first attempt of the next event fails on the remote side.
	_, err = sandboxCLI(t, append(own, "faults", "add", "--attempt", "1", "--count", "1", sb.ID, "webhook-fail")...)
	require.NoError(t, err)

	l := listenTo(t, sb, adminURL)
	id := l.send()
	// Once the first attempt failed, its retry comes due on the sandbox's
	// clock, with the fax's steps.
	require.Eventually(t, func() bool {
		out, err := sandboxCLI(t, append(own, "webhooks", sb.ID)...)
		return err == nil && strings.Contains(out, `"succeeded": false`)
	}, 30*time.Second, 20*time.Millisecond)
	_, err = sandboxCLI(t, append(own, "advance", sb.ID, "10m")...)
	require.NoError(t, err)
	awaitEvent(t, l.events, id, "fax.delivered")

	page := webhookLogOf(t, append(own, "webhooks", "--limit", "1000", sb.ID)...)
	var retried string
	for _, a := range page.Data {
		if a.Attempt > 1 {
			retried = a.Event.ID
		}
	}
	require.NotEmpty(t, retried, "an event was retried on the remote side: %+v", page)
	events2 := map[string]int{}
	for _, a := range page.Data {
		if a.Attempt == 1 {
			events2[lineOf(a.Event.Type, a.Event.ID, 1)+" -> 204 No Content"]++
		}
	}
	require.Eventually(t, func() bool {
		for line := range events2 {
			if !strings.Contains(l.out.String(), line) {
				return false
			}
		}
		return true
	}, 30*time.Second, 10*time.Millisecond, l.out.String())
	require.NoError(t, l.stop())
	lines := strings.Split(strings.TrimSpace(l.out.String()), "\n")
	assert.Len(t, lines, len(events2), "one line per event: %s", l.out.String())
	assert.Equal(t, 1, strings.Count(l.out.String(), " "+retried+" "), "the retried event once: %s", l.out.String())
}

// listening is `apistack listen` forwarding a sandbox's webhooks to a
// verifying receiver (listenTo).
type listening struct {
	// events are those the receiver accepted; out and err what listen
	// printed.
	events   <-chan faxclient.Event
	out, err *safebuf.Buffer
	// stop stops listen and returns its error; send sends a fax of the
	// sandbox and returns its id.
	stop func() error
	send func() string
}

// listenTo runs `apistack listen` for sandbox sb of the stack at adminURL
// until stop is called or the test ends.
func listenTo(t *testing.T, sb createdSandbox, adminURL string) *listening {
	t.Helper()
	fc := sb.Credentials["fax"]
	local, events := verifyingReceiver(t, fc["webhook_public_key"])
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	l := &listening{events: events, out: &safebuf.Buffer{}, err: &safebuf.Buffer{}}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"listen", "--sandbox", sb.ID, "--forward-to", local.URL, "--url", adminURL, "--token", sb.Token}, l.out, l.err)
	}()
	l.stop = func() error {
		cancel()
		return <-done
	}
	client, err := faxclient.New(faxclient.Config{BaseURL: fc["base_url"], APIKey: fc["api_key"]})
	require.NoError(t, err)
	l.send = func() string {
		f, err := client.SendFax(context.Background(), faxclient.SendFaxParams{ConnectionID: fc["connection_id"], From: fc["from"],
			To: "+13125550800", MediaURL: adminURL + "/fax/sample.pdf"})
		require.NoError(t, err)
		return f.ID.String()
	}
	return l
}

// webhookLog is what `apistack sandbox webhooks` prints: a page of a
// sandbox's delivery attempts, each with its event.
type webhookLog struct {
	Data []struct {
		Attempt   int  `json:"attempt"`
		Succeeded bool `json:"succeeded"`
		Event     struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		} `json:"event"`
	} `json:"data"`
}

// webhookLogOf runs `apistack sandbox` with args (a webhooks command) and
// decodes the page it prints.
func webhookLogOf(t *testing.T, args ...string) webhookLog {
	t.Helper()
	out, err := sandboxCLI(t, args...)
	require.NoError(t, err)
	var page webhookLog
	require.NoError(t, json.Unmarshal([]byte(out), &page), out)
	return page
}
