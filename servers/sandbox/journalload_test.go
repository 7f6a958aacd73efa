package sandbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/sandbox"
	"github.com/apistack/apistack/servers/stack"
)

// manySandboxes is how many sandboxes BenchmarkJournalCostManySandboxes
// drives at once.
const manySandboxes = 50

// sandboxLoad is one sandbox's traffic in BenchmarkJournalCostManySandboxes
// and TestJournal_RecordsEverySandboxsRequestsInOrderUnderLoad: what a
// service under test sends with the sandbox's credentials, one request at
// a time, and what of it the journal must hold.
type sandboxLoad struct {
	box               *box
	client            *http.Client
	listURL, tokenURL string
	faxURL            string
	tokenBody         []byte
	faxBody           []byte
	bearer, faxKey    string
	n                 int
	// journaled says whether the journal is on for the requests to come;
	// sent lists the operations of those sent while it was, since after
	// (the seq of the journal's last entry before them: markJournal).
	journaled bool
	sent      []string
	after     int64
}

// newSandboxLoad creates a sandbox through the sandbox API, as a user
// would, gives its PAM team groups to list, and prepares its requests.
func newSandboxLoad(tb testing.TB, e *env, client *http.Client, i int) *sandboxLoad {
	tb.Helper()
	ctx := context.Background()
	sb := e.create(tb, sandboxapi.CreateSandboxRequest{})
	for g := range 10 {
		_, err := sb.pam.CreateGroup(ctx, fmt.Sprintf("group-%02d", g))
		require.NoError(tb, err)
	}
	c := sb.Credentials
	tokenBody, err := json.Marshal(map[string]string{"key_id": c.Pam.KeyId, "key_secret": c.Pam.KeySecret})
	require.NoError(tb, err)
	faxBody, err := json.Marshal(map[string]string{"connection_id": c.Fax.ConnectionId, "from": c.Fax.From,
		"to": fmt.Sprintf("+1415555%04d", i), "media_url": e.urls[stack.Admin] + stack.FaxSamplePath})
	require.NoError(tb, err)
	l := &sandboxLoad{box: sb, client: client,
		listURL:  c.Pam.BaseUrl + "/v1/teams/" + c.Pam.Team + "/groups?count=10",
		tokenURL: c.Pam.BaseUrl + "/v1/teams/" + c.Pam.Team + "/service_token",
		faxURL:   c.Fax.BaseUrl + "/v2/faxes", tokenBody: tokenBody, faxBody: faxBody, faxKey: c.Fax.ApiKey}
	out, err := l.send(ctx, http.MethodPost, l.tokenURL, "", l.tokenBody, http.StatusOK)
	require.NoError(tb, err)
	var token struct {
		BearerToken string `json:"bearer_token"`
	}
	require.NoError(tb, json.Unmarshal(out, &token))
	require.NotEmpty(tb, token.BearerToken)
	l.bearer = token.BearerToken
	return l
}

func (l *sandboxLoad) send(ctx context.Context, method, url, bearer string, body []byte, want int) ([]byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s: %d, not %d: %s", method, url, resp.StatusCode, want, out)
	}
	return out, nil
}

// step sends the sandbox's next request: a PAM list, a token exchange or
// a fax, in turn.
func (l *sandboxLoad) step(ctx context.Context) error {
	var err error
	var op string
	switch l.n % 3 {
	case 0:
		op = "ListGroups"
		_, err = l.send(ctx, http.MethodGet, l.listURL, l.bearer, nil, http.StatusOK)
	case 1:
		op = "IssueServiceToken"
		_, err = l.send(ctx, http.MethodPost, l.tokenURL, "", l.tokenBody, http.StatusOK)
	default:
		op = "SendFax"
		_, err = l.send(ctx, http.MethodPost, l.faxURL, l.faxKey, l.faxBody, http.StatusAccepted)
	}
	l.n++
	if err == nil && l.journaled {
		l.sent = append(l.sent, op)
	}
	return err
}

// entries lists the sandbox's journal after seq after, page by page.
func (l *sandboxLoad) entries(tb testing.TB, after int64) []sandboxapi.JournalEntry {
	tb.Helper()
	var out []sandboxapi.JournalEntry
	for {
		resp, err := l.box.api.ListSandboxRequestsWithResponse(context.Background(), l.box.Id,
			&sandboxapi.ListSandboxRequestsParams{After: &after, Limit: ptr(1000)})
		require.NoError(tb, err)
		require.Equal(tb, http.StatusOK, resp.StatusCode(), string(resp.Body))
		out = append(out, resp.JSON200.Data...)
		if resp.JSON200.NextAfter == nil {
			return out
		}
		after = *resp.JSON200.NextAfter
	}
}

// markJournal notes the seq of the journal's last entry: checkJournal
// reads what comes after it.
func (l *sandboxLoad) markJournal(tb testing.TB) {
	tb.Helper()
	if all := l.entries(tb, 0); len(all) > 0 {
		l.after = all[len(all)-1].Seq
	}
	l.sent = nil
}

// checkJournal asserts that the journal holds, after the mark, exactly
// the requests sent with the journal on, in the order sent, with their
// statuses, and none of the sandbox's secrets.
func (l *sandboxLoad) checkJournal(tb testing.TB) {
	tb.Helper()
	got := l.entries(tb, l.after)
	ops := make([]string, len(got))
	for i, e := range got {
		ops[i] = e.Operation
	}
	require.Equal(tb, l.sent, ops, "sandbox %s: the journal lists what it sent, in order", l.box.Id)
	secrets := []string{l.box.Credentials.Pam.KeySecret, l.bearer, l.faxKey}
	want := map[string]int{"ListGroups": http.StatusOK, "IssueServiceToken": http.StatusOK, "SendFax": http.StatusAccepted}
	for i, e := range got {
		require.Equal(tb, want[e.Operation], e.Status, "entry %d", e.Seq)
		if i > 0 {
			require.Greater(tb, e.Seq, got[i-1].Seq)
			require.False(tb, e.Time.Before(got[i-1].Time), "entry %d arrived before the one before it", e.Seq)
		}
		raw, err := json.Marshal(e)
		require.NoError(tb, err)
		for _, s := range secrets {
			require.NotContains(tb, string(raw), s, "entry %d shows a secret", e.Seq)
		}
		switch e.Operation {
		case "IssueServiceToken":
			var req, resp map[string]any
			require.NoError(tb, json.Unmarshal([]byte(e.RequestBody), &req))
			require.NoError(tb, json.Unmarshal([]byte(e.ResponseBody), &resp))
			require.Equal(tb, l.box.Credentials.Pam.KeyId, req["key_id"])
			require.Equal(tb, "[redacted]", req["key_secret"])
			require.Equal(tb, "[redacted]", resp["bearer_token"])
		default:
			require.Equal(tb, []string{"[redacted]"}, e.RequestHeaders["Authorization"], "entry %d", e.Seq)
		}
	}
}

// BenchmarkJournalCostManySandboxes measures the total throughput of 50
// sandboxes, each created through the sandbox API and driven by its own
// client sending its own PAM and fax traffic (PAM list, token exchange,
// fax send, in turn), all at once, with the journal on and off in
// alternating rounds of the same run on the same stack, on the run's
// backend (APISTACK_TEST_BACKEND=postgres for PostgreSQL), each sandbox's
// journal bounded as serve bounds it by default. It reports the ratio of
// the median throughputs, the median of the ratios of adjacent rounds
// (target: at least 0.85), the CPU ratio and the load average at the end.
// Then every sandbox's journal must hold exactly the requests it sent with
// the journal on, in order, their secrets redacted.
//
// Each iteration is a pair of rounds (-benchtime=6x: six pairs).
func BenchmarkJournalCostManySandboxes(b *testing.B) {
	e := start(b, envOptions{pamRateLimit: 1 << 30, faxRateLimit: 1 << 30,
		journal: sandbox.JournalBudget{Entries: sandbox.DefaultJournalEntries, Bytes: sandbox.DefaultJournalBytes}})
	ctx := context.Background()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * manySandboxes}}
	loads := make([]*sandboxLoad, manySandboxes)
	for i := range loads {
		loads[i] = newSandboxLoad(b, e, client, i)
	}
	journal := e.st.Sandboxes.Journal()
	defer journal.SetEnabled(true)
	const round = 400 * time.Millisecond
	// run drives every sandbox for one round, the journal on or off, and
	// returns requests per second and this process's CPU time per request.
	run := func(on bool) (float64, time.Duration) {
		journal.SetEnabled(on)
		var n atomic.Int64
		cpu0, t0 := cpuTime(b), time.Now()
		deadline := t0.Add(round)
		var wg sync.WaitGroup
		for _, l := range loads {
			l.journaled = on
			wg.Go(func() {
				for time.Now().Before(deadline) {
					if err := l.step(ctx); err != nil {
						b.Error(err)
						return
					}
					n.Add(1)
				}
			})
		}
		wg.Wait()
		// The round pays for committing what it journaled (nothing when
		// the journal is off), not the round after it.
		journal.Flush(ctx)
		return float64(n.Load()) / time.Since(t0).Seconds(), (cpuTime(b) - cpu0) / time.Duration(max(n.Load(), 1))
	}
	run(true) // warm up
	journal.Flush(ctx)
	for _, l := range loads {
		l.markJournal(b)
	}
	journalOnOff(b, run)
	b.ReportMetric(loadAverage(b), "loadavg-1m")
	// Every sandbox's journal holds what it sent with the journal on.
	for _, l := range loads {
		l.checkJournal(b)
	}
}

// loadAverage is the machine's load average over the last minute.
func loadAverage(tb testing.TB) float64 {
	tb.Helper()
	raw, err := os.ReadFile("/proc/loadavg")
	require.NoError(tb, err)
	var one float64
	_, err = fmt.Sscan(strings.Fields(string(raw))[0], &one)
	require.NoError(tb, err)
	return one
}

// TestJournal_RecordsEverySandboxsRequestsInOrderUnderLoad drives eight
// sandboxes at once, each with its own PAM and fax traffic, the journal on,
// then off, then on again: each sandbox's journal holds exactly the
// requests it sent while the journal was on, in order, with their
// statuses, their secrets redacted.
func TestJournal_RecordsEverySandboxsRequestsInOrderUnderLoad(t *testing.T) {
	e := start(t, envOptions{pamRateLimit: 1 << 30, faxRateLimit: 1 << 30})
	ctx := context.Background()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	loads := make([]*sandboxLoad, 8)
	for i := range loads {
		loads[i] = newSandboxLoad(t, e, client, i)
		loads[i].markJournal(t)
	}
	journal := e.st.Sandboxes.Journal()
	defer journal.SetEnabled(true)
	for _, phase := range []struct {
		on    bool
		steps int
	}{{true, 30}, {false, 9}, {true, 30}} {
		journal.SetEnabled(phase.on)
		var wg sync.WaitGroup
		for _, l := range loads {
			l.journaled = phase.on
			wg.Go(func() {
				for range phase.steps {
					if err := l.step(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	journal.SetEnabled(true)
	for _, l := range loads {
		require.Len(t, l.sent, 60)
		l.checkJournal(t)
	}
}
