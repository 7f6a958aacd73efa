package sandbox_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/internal/tenantapi"
)

const faxFixture = `{"fax": {
	"applications": [{"name": "billing"}],
	"numbers": [{"name": "main", "application": "billing"}, {"name": "spare"}],
	"api_keys": ["ci"],
	"faxes": [
		{"application": "billing", "from": "main", "to": "+13125550101", "status": "delivered", "pages": 3},
		{"application": "billing", "from": "main", "to": "+13125550102", "status": "failed", "failure_reason": "user_busy"},
		{"application": "billing", "from": "main", "to": "+13125550103", "status": "queued"}
	]
}}`

// faxKeyClient is a fax client on the API key the fixture named name.
func faxKeyClient(t testing.TB, b *box, name string) *tenantapi.FaxClient {
	t.Helper()
	require.NotNil(t, b.FixtureCredentials)
	require.NotNil(t, b.FixtureCredentials.Fax)
	key, ok := (*b.FixtureCredentials.Fax.ApiKeys)[name]
	require.True(t, ok, "key %q", name)
	return tenantapi.NewFax(t, b.Credentials.Fax.BaseUrl, key)
}

// faxesByTo lists b's faxes by the number they were sent to.
func faxesByTo(t testing.TB, c *tenantapi.FaxClient) map[string]tenantapi.Fax {
	t.Helper()
	out := map[string]tenantapi.Fax{}
	for f, err := range c.ListFaxes(context.Background(), nil) {
		require.NoError(t, err)
		out[f.To] = f
	}
	return out
}

// checkFaxFixture checks, through b's clients, what faxFixture made.
func checkFaxFixture(t testing.TB, b *box) {
	t.Helper()
	ctx := context.Background()
	fx := b.FixtureCredentials.Fax
	main := (*fx.Numbers)["main"]
	require.NotEmpty(t, main)
	assert.NotEqual(t, main, (*fx.Numbers)["spare"])
	app, err := b.fax.GetApplication(ctx, (*fx.Applications)["billing"])
	require.NoError(t, err)
	assert.Equal(t, "billing", app.ApplicationName)
	c := faxKeyClient(t, b, "ci")
	faxes := faxesByTo(t, c)
	require.Len(t, faxes, 3)
	for to, want := range map[string]string{"+13125550101": "delivered", "+13125550102": "failed", "+13125550103": "queued"} {
		f := faxes[to]
		assert.Equal(t, want, string(f.Status), to)
		assert.Equal(t, main, f.From, to)
		assert.Equal(t, app.Id, f.ConnectionId, to)
	}
	assert.Equal(t, "user_busy", string(*faxes["+13125550102"].FailureReason))
	assert.Equal(t, 3, *faxes["+13125550101"].PageCount)
}

func TestFixtures_FaxSectionCreatesApplicationsNumbersKeysAndFaxesWithTheirEvents(t *testing.T) {
	e := start(t, envOptions{})
	b := e.createFixture(t, faxFixture)
	checkFaxFixture(t, b)
	// The events the simulator would have queued reach the sandbox's inbox.
	delivered := (*b.FixtureCredentials.Fax.Applications)["billing"]
	require.NotEmpty(t, delivered)
	faxes := faxesByTo(t, b.fax)
	page := e.driveUntil(t, b, "the fixture's events delivered", func(p *sandboxapi.WebhookLogPage) bool {
		seen := map[string]bool{}
		for _, a := range p.Data {
			if a.Succeeded {
				seen[a.Event.FaxId+" "+string(a.Event.Type)] = true
			}
		}
		return seen[faxes["+13125550101"].ID.String()+" fax.delivered"] && seen[faxes["+13125550102"].ID.String()+" fax.failed"]
	})
	e.inboxOnly(t, b, page, faxes["+13125550101"].ID.String(), faxes["+13125550102"].ID.String(), faxes["+13125550103"].ID.String())
	// The queued fax goes on in the sandbox's time.
	require.Eventually(t, func() bool {
		advance(t, b, "1m")
		return faxStatus(t, b, faxes["+13125550103"].ID.String()) == "delivered"
	}, 20*1e9, 1e7)
}

func TestFixtures_ABadFaxSectionAnswers400WithThePointer(t *testing.T) {
	e := start(t, envOptions{})
	for _, c := range []struct{ fixture, pointer string }{
		{`{"fax": {"applications": [{"name": "a"}], "numbers": [{"name": "n", "application": "a"}],
			"faxes": [{"application": "a", "from": "n", "to": "555-0100", "status": "delivered"}]}}`, "/fixture/fax/faxes/0/to"},
		{`{"fax": {"applications": [{"name": "a"}, {"name": "a"}]}}`, "/fixture/fax/applications/1/name"},
		{`{"fax": {"numbers": [{"name": "n", "application": "nope"}]}}`, "/fixture/fax/numbers/0/application"},
		{`{"fax": {"applications": [{"name": "a"}], "numbers": [{"name": "n"}],
			"faxes": [{"application": "a", "from": "n", "to": "+13125550101", "status": "delivered"}]}}`, "/fixture/fax/faxes/0/from"},
	} {
		t.Run(c.pointer, func(t *testing.T) { e.refusesFixture(t, c.fixture, c.pointer) })
	}
}

func TestSnapshots_AForkHoldsTheFaxesTheirEventsAndNewNumbers(t *testing.T) {
	e := start(t, envOptions{})
	orig := e.createFixture(t, faxFixture)
	origFaxes := faxesByTo(t, orig.fax)
	e.driveUntil(t, orig, "the fixture's events delivered", func(p *sandboxapi.WebhookLogPage) bool {
		return len(p.Pending) == 0 && len(p.Data) > 0
	})
	snap := snapshot(t, orig)
	assert.Contains(t, snap.Apis, "fax")
	f := e.fork(t, snap.Id)
	checkFaxFixture(t, f)
	assert.NotEqual(t, orig.Credentials.Fax.From, f.Credentials.Fax.From, "numbers are global: the fork has its own")
	assert.NotEqual(t, (*orig.FixtureCredentials.Fax.Numbers)["main"], (*f.FixtureCredentials.Fax.Numbers)["main"])
	forked := faxesByTo(t, f.fax)
	for to, o := range origFaxes {
		assert.NotEqual(t, o.ID, forked[to].ID, "a fork's fax has an id of its own")
	}
	// The original's key reads none of the fork's faxes.
	_, err := orig.fax.GetFax(context.Background(), forked["+13125550101"].ID.String())
	assert.Equal(t, http.StatusNotFound, statusOf(err))
	// The fork's webhook log holds the events, renamed to its faxes, and
	// its queued fax goes on in its own time, its events to its own inbox.
	log := webhookLog(t, f, 0)
	require.NotEmpty(t, log.Data)
	for _, a := range log.Data {
		assert.Contains(t, []string{forked["+13125550101"].ID.String(), forked["+13125550102"].ID.String(), forked["+13125550103"].ID.String()},
			a.Event.FaxId)
		assert.Contains(t, a.Body, a.Event.FaxId, "the body names the fork's fax")
	}
	require.Eventually(t, func() bool {
		advance(t, f, "1m")
		return faxStatus(t, f, forked["+13125550103"].ID.String()) == "delivered"
	}, 20*1e9, 1e7)
	e.driveUntil(t, f, "the fork's fax delivered", delivered(forked["+13125550103"].ID.String(), "fax.delivered"))
}
