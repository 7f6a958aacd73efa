package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	faxclient "github.com/apistack/apistack/clients/fax"
	"github.com/apistack/apistack/servers/internal/safebuf"
)

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
	out, err = sandboxCLI(t, "--data-dir", dataDir, "--sandbox-token", sb.Token, "webhooks", "--limit", "1000", sb.ID)
	require.NoError(t, err)
	var page struct {
		Data []struct {
			Attempt int `json:"attempt"`
			Event   struct {
				ID   string `json:"id"`
				Type string `json:"type"`
			} `json:"event"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &page), out)
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

// needTools skips the test when a tool is missing (fails under CI, where
// .ci/run installs them).
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is needed (.ci/run installs it)", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
}

// readmeBlock is the sh block of the README between <!-- name --> and
// <!-- /name -->.
func readmeBlock(t *testing.T, name string) string {
	t.Helper()
	readme, err := os.ReadFile("../../../README.md")
	require.NoError(t, err)
	_, block, ok := strings.Cut(string(readme), "<!-- "+name+" -->\n```sh\n")
	require.True(t, ok, "README has no %s block", name)
	script, _, ok := strings.Cut(block, "```\n<!-- /"+name+" -->")
	require.True(t, ok, name)
	return script
}

func TestREADME_SandboxWebhooksSectionRuns(t *testing.T) {
	// The curl block: reads the log, redelivers.
	dir, creds, _ := runREADMEBlockOnDemo(t, "sandbox-webhooks-example")
	var sb createdSandbox
	data, err := os.ReadFile(filepath.Join(dir, "sandbox.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &sb))
	defer func() {
		_, err := sandboxCLI(t, "--sandbox-url", creds["admin"]["base_url"], "--sandbox-token", sb.Token, "delete", sb.ID)
		assert.NoError(t, err)
	}()

	// The listen block, with the binary built from here, forwarding to a
	// receiver that verifies each delivery: the redelivered event arrives
	// twice, each signed anew.
	bin := filepath.Join(dir, "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "apistack"), ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run(), "go build")
	local, events := verifyingReceiver(t, sb.Credentials["fax"]["webhook_public_key"])
	listenOut := &safebuf.Buffer{}
	listen := exec.Command("bash", "-euo", "pipefail", "-c", readmeBlock(t, "sandbox-listen-example"))
	listen.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"SBX_URL="+creds["admin"]["base_url"], "SBX_ID="+sb.ID, "SBX_TOKEN="+sb.Token, "LOCAL_URL="+local.URL+"/fax-webhooks")
	listen.Stdout, listen.Stderr = listenOut, listenOut
	require.NoError(t, listen.Start())
	defer func() {
		// bash runs the block's one command in its own process: the signal
		// reaches apistack listen, which stops.
		_ = listen.Process.Signal(os.Interrupt)
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

	out, err = sandboxCLI(t, append(own, "webhooks", "--limit", "1000", sb.ID)...)
	require.NoError(t, err)
	var page struct {
		Data []struct {
			Attempt   int  `json:"attempt"`
			Succeeded bool `json:"succeeded"`
			Event     struct {
				ID   string `json:"id"`
				Type string `json:"type"`
			} `json:"event"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &page), out)
	var retried string
	for _, a := range page.Data {
		if a.Attempt > 1 {
			retried = a.Event.ID
		}
	}
	require.NotEmpty(t, retried, "an event was retried on the remote side: %s", out)
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
