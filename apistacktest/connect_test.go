package apistacktest_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/apistacktest"
	"github.com/apistack/apistack/clients/pam"
)

// bothWays runs test on an in-process stack and on a sandbox of a running
// stack (Connect, here to an in-process stack's admin port).
func bothWays(t *testing.T, test func(t *testing.T, st *apistacktest.Stack)) {
	t.Run("in process", func(t *testing.T) {
		t.Parallel()
		test(t, apistacktest.Start(t, apistacktest.Options{}))
	})
	t.Run("connected", func(t *testing.T) {
		t.Parallel()
		host := apistacktest.Start(t, apistacktest.Options{})
		st := apistacktest.Connect(t, host.AdminURL, host.SandboxCreatorToken())
		require.True(t, st.Remote())
		test(t, st)
	})
}

// The same test code drives the clients, the clock, the inbox, faults and
// the journal in process and connected.
func TestConnect_TheSameTestRunsInProcessAndConnected(t *testing.T) {
	bothWays(t, func(t *testing.T, st *apistacktest.Stack) {
		ctx := context.Background()
		_, err := st.PAM.CreateGroup(ctx, "payroll")
		require.NoError(t, err)
		created := st.Requests(t, apistacktest.RequestFilter{Operation: "CreateGroup"})
		require.Len(t, created, 1)
		assert.Equal(t, http.StatusCreated, created[0].Status)
		assert.Contains(t, created[0].RequestBody, "payroll")
		assert.Empty(t, created[0].Violations)

		// The clock: a fax is delivered once time moves.
		id := sendFax(t, st, "+13125550800")
		t0 := st.Clock.Now()
		st.Clock.Advance(10 * time.Minute)
		assert.Equal(t, t0.Add(10*time.Minute), st.Clock.Now())
		wait(t, st, id, "fax.delivered")
		sent := st.Requests(t, apistacktest.RequestFilter{API: "fax", Operation: "SendFax"})
		require.Len(t, sent, 1, "my code sent this fax once")
		assert.Contains(t, sent[0].RequestBody, "to=%2B13125550800")

		// A fault: the next ListGroups answers 429; the client rides it out.
		st.Inject(t, apistacktest.PAM, apistacktest.Fault{Kind: apistacktest.RateLimited, Operation: "ListGroups", Count: 1})
		require.NoError(t, listGroups(st))
		assert.Equal(t, 1, st.Injected(apistacktest.PAM, apistacktest.RateLimited))
		assert.NotEmpty(t, st.Requests(t, apistacktest.RequestFilter{Operation: "ListGroups", Status: http.StatusOK}))

		// Webhook faults: the next delivery comes twice.
		st.Webhooks().Duplicate(1)
		id = sendFax(t, st, "+13125550800")
		st.Clock.Advance(10 * time.Minute)
		wait(t, st, id, "fax.delivered")
		events := st.Inbox.EventsOf(id)
		require.NotEmpty(t, events)
		assert.Equal(t, events[0].ID, events[1].ID, "the first delivery came twice: %v", typesOf(events))
		st.ClearFaults()

		team := st.SeedTeam(t, "", 3, nil)
		assert.Len(t, team.Groups, 3)
		assert.Empty(t, st.Violations())
	})
}

// A connected stack's sandbox is gone once the test ends, and its
// credentials with it.
func TestConnect_DeletesItsSandboxAtCleanup(t *testing.T) {
	t.Parallel()
	host := apistacktest.Start(t, apistacktest.Options{})
	var id string
	var cfg pam.Config
	t.Run("uses a sandbox", func(t *testing.T) {
		st := apistacktest.Connect(t, host.AdminURL, host.SandboxCreatorToken())
		id, cfg = st.SandboxID(), st.PAMConfig()
		_, err := st.PAM.CreateGroup(context.Background(), "g")
		require.NoError(t, err)
	})
	require.NotEmpty(t, id)
	c, err := pam.New(cfg)
	require.NoError(t, err)
	_, err = c.CreateGroup(context.Background(), "h")
	var pe *pam.Error
	require.True(t, errors.As(err, &pe), "the deleted sandbox's key still works: %v", err)
	assert.Equal(t, http.StatusUnauthorized, pe.StatusCode)
}

// A connected stack refuses what needs the servers in process, and a bad
// URL or token fails Connect.
func TestConnect_RefusesInProcessOnlyHelpersAndBadTokens(t *testing.T) {
	t.Parallel()
	host := apistacktest.Start(t, apistacktest.Options{})
	rec := &recorder{}
	st := apistacktest.Connect(rec, host.AdminURL, host.SandboxCreatorToken())
	require.NotNil(t, st)
	st.SeedMenu(rec, 3, 1)
	require.Len(t, rec.failures(), 1)
	assert.Contains(t, rec.failures()[0], "SeedMenu works only in process")
	rec.finish()
	assert.Len(t, rec.failures(), 1, "the cleanup deletes the sandbox without an error")

	bad := &recorder{}
	assert.Nil(t, apistacktest.Connect(bad, host.AdminURL, "wrong-token"))
	require.Len(t, bad.failures(), 1)
	assert.Contains(t, bad.failures()[0], "401")
}

// listGroups lists the stack's groups to the end.
func listGroups(st *apistacktest.Stack) error {
	for _, err := range st.PAM.ListGroups(context.Background(), nil) {
		if err != nil {
			return err
		}
	}
	return nil
}

// A connected stack's Inbox reads the sandbox's webhook log: the sandbox's
// fax application keeps delivering to the sandbox's own inbox (the
// deployment never posts to the test), a reordering fault shows in the
// Inbox as the deployment applied it, and deliveries to a test's own URL
// are not the Inbox's.
func TestConnect_InboxReadsTheSandboxsWebhookLog(t *testing.T) {
	t.Parallel()
	host := apistacktest.Start(t, apistacktest.Options{})
	st := apistacktest.Connect(t, host.AdminURL, host.SandboxCreatorToken())
	ctx := context.Background()
	app, err := st.Fax.GetApplication(ctx, st.Credentials.Fax.ConnectionID)
	require.NoError(t, err)
	assert.Equal(t, host.AdminURL+"/sandboxes/"+st.SandboxID()+"/inbox", app.WebhookURL)

	st.Webhooks().Reorder(1)
	id := sendFax(t, st, "+13125550800")
	st.Clock.Advance(10 * time.Minute)
	wait(t, st, id, "fax.delivered")
	types := typesOf(st.Inbox.EventsOf(id))
	require.GreaterOrEqual(t, len(types), 2)
	assert.Equal(t, []string{"fax.media.processed", "fax.queued"}, types[:2], "the first two came swapped")

	// Pointed at a receiver of the test's own, the deliveries go there.
	got := make(chan string, 16)
	own := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Content-Type")
		w.WriteHeader(http.StatusNoContent)
	}))
	defer own.Close()
	st.SetFaxWebhookURL(t, own.URL+"/hooks")
	before := len(st.Inbox.Events())
	id = sendFax(t, st, "+13125550800")
	st.Clock.Advance(10 * time.Minute)
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery reached the test's own receiver")
	}
	status, err := st.Fax.GetFax(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, "delivered", string(status.Status))
	assert.Empty(t, st.Inbox.EventsOf(id), "a delivery to another URL is not the inbox's")
	assert.Len(t, st.Inbox.Events(), before)
}

// A test that closes its connected stack itself still hears of the
// requests that broke the spec: Close reads the sandbox's journal before it
// deletes the sandbox, and Violations (and the clean-up that reports them)
// answers from what it read.
func TestConnect_ViolationsAreKeptAfterClose(t *testing.T) {
	t.Parallel()
	// The host stands for a running deployment: the request is the
	// sandbox's to report, not the host's.
	host := apistacktest.Start(t, apistacktest.Options{AllowInvalidRequests: true})
	rec := &recorder{}
	st := apistacktest.Connect(rec, host.AdminURL, host.SandboxCreatorToken())
	require.NotNil(t, st)
	ctx := context.Background()
	token, err := st.PAM.Token(ctx)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, st.PAMURL+"/v1/teams/"+st.Credentials.PAM.Team+"/groups?count=5000", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Eventually(t, func() bool { return len(st.Violations()) == 1 }, 10*time.Second, 10*time.Millisecond,
		"the journal lists the request")

	st.Close()
	require.Len(t, st.Violations(), 1, "read before the sandbox went")
	assert.Contains(t, st.Violations()[0].Error(), "query count")
	rec.finish()
	require.Len(t, rec.failures(), 1, "the clean-up reports the violation, and no error reading a deleted sandbox")
	assert.Contains(t, rec.failures()[0], "query count")
}
