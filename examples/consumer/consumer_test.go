package consumer_test

import (
	"context"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/apistacktest"

	"example.com/consumer"
)

// newStack is the whole of apistack for the test: in the test's process
// (apistacktest.Start), or, when APISTACK_URL names a running apistack's
// admin port (`make test` starts `apistack serve --demo` for it), a sandbox
// of it created with APISTACK_SANDBOX_TOKEN and deleted when the test ends
// (apistacktest.Connect). The tests below run the same either way.
func newStack(t *testing.T, opts apistacktest.Options) *apistacktest.Stack {
	t.Helper()
	if url := os.Getenv("APISTACK_URL"); url != "" {
		return apistacktest.Connect(t, url, os.Getenv("APISTACK_SANDBOX_TOKEN"))
	}
	return apistacktest.Start(t, opts)
}

// newService starts the whole of apistack for the test and the service
// configured against it, its webhook receiver included.
func newService(t *testing.T, opts apistacktest.Options) (*apistacktest.Stack, *consumer.Service) {
	t.Helper()
	st := newStack(t, opts)
	svc, err := consumer.New(consumer.Config{
		PAM: st.PAMConfig(), Restaurant: st.RestaurantConfig(), Storage: st.StorageConfig(), Fax: st.FaxConfig(),
		FaxConnectionID: st.Credentials.Fax.ConnectionID, FaxFrom: st.Credentials.Fax.From,
		WebhookPublicKey: st.WebhookPublicKey, Now: st.Clock.Now,
	})
	require.NoError(t, err)
	receiver := httptest.NewServer(svc.WebhookHandler())
	t.Cleanup(receiver.Close)
	st.SetFaxWebhookURL(t, receiver.URL+"/fax-events")
	return st, svc
}

func TestGroupNames_FollowsEveryPage(t *testing.T) {
	t.Parallel()
	st, svc := newService(t, apistacktest.Options{})
	team := st.SeedTeam(t, "", 250, nil)

	names, err := svc.GroupNames(context.Background(), 100)
	require.NoError(t, err)
	for _, g := range team.Groups {
		assert.Contains(t, names, g)
	}
}

func TestGroupNames_RidesOutARateLimit(t *testing.T) {
	t.Parallel()
	st, svc := newService(t, apistacktest.Options{})
	st.SeedTeam(t, "", 5, nil)
	st.Inject(t, apistacktest.PAM, apistacktest.Fault{Kind: apistacktest.RateLimited, Operation: "ListGroups", Count: 1})

	names, err := svc.GroupNames(context.Background(), 2)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(names), 5)
	assert.Equal(t, 1, st.Injected(apistacktest.PAM, apistacktest.RateLimited))
}

func TestMenuItemNames_FollowsEveryPage(t *testing.T) {
	t.Parallel()
	st, svc := newService(t, apistacktest.Options{})
	if st.Remote() {
		t.Skip("SeedMenu imports a menu through the restaurant server's operator code path, which only an in-process stack exposes")
	}
	st.SeedMenu(t, 350, 1) // more than one page of 300

	names, err := svc.MenuItemNames(context.Background())
	require.NoError(t, err)
	assert.Len(t, names, 350)
}

func TestSendFax_LearnsOfTheDeliveryFromTheWebhook(t *testing.T) {
	t.Parallel()
	st, svc := newService(t, apistacktest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	id, err := svc.SendFax(ctx, "+13125550800", st.SampleFaxURL)
	require.NoError(t, err)
	st.Clock.Advance(10 * time.Minute) // no sleep: the fax takes its steps now
	require.NoError(t, svc.WaitForFax(ctx, id))
	// What the service sent, as the journal has it: this fax, once.
	sent := st.Requests(t, apistacktest.RequestFilter{API: "fax", Operation: "SendFax"})
	require.Len(t, sent, 1)
	assert.Contains(t, sent[0].RequestBody, "to=%2B13125550800")
}

func TestSendFax_ABusyLineFails(t *testing.T) {
	t.Parallel()
	st, svc := newService(t, apistacktest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	id, err := svc.SendFax(ctx, "+13125550801", st.SampleFaxURL) // a test number: user_busy
	require.NoError(t, err)
	st.Clock.Advance(10 * time.Minute)
	require.ErrorIs(t, svc.WaitForFax(ctx, id), consumer.ErrFaxFailed)
}

func TestSendFax_ToleratesDuplicatedWebhooks(t *testing.T) {
	t.Parallel()
	st, svc := newService(t, apistacktest.Options{})
	st.Webhooks().Duplicate(10)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	id, err := svc.SendFax(ctx, "+13125550800", st.SampleFaxURL)
	require.NoError(t, err)
	st.Clock.Advance(10 * time.Minute)
	require.NoError(t, svc.WaitForFax(ctx, id))
}

func TestExpireLogs_PutsTheLifecycleRule(t *testing.T) {
	t.Parallel()
	st, svc := newService(t, apistacktest.Options{})
	bucket := st.Credentials.Storage.Bucket

	require.NoError(t, svc.ExpireLogs(context.Background(), bucket, 30))
	cfg, err := st.Storage.GetLifecycle(context.Background(), bucket)
	require.NoError(t, err)
	require.Len(t, cfg.Rules, 1)
	assert.Equal(t, "expire-logs", *cfg.Rules[0].ID)
}

// TestDocs_TestingGuideShowsTheseTests checks that the Go code the testing
// guide's "In process" section shows is this file's, verbatim.
func TestDocs_TestingGuideShowsTheseTests(t *testing.T) {
	readme, err := os.ReadFile("../../docs/testing.md")
	require.NoError(t, err)
	own, err := os.ReadFile("consumer_test.go")
	require.NoError(t, err)
	section := string(readme)
	start := strings.Index(section, "## In process")
	require.GreaterOrEqual(t, start, 0)
	section = section[start:]
	section = section[:strings.Index(section[3:], "\n## ")+3]
	blocks := 0
	for rest := section; ; blocks++ {
		i := strings.Index(rest, "```go\n")
		if i < 0 {
			break
		}
		rest = rest[i+len("```go\n"):]
		end := strings.Index(rest, "```")
		require.GreaterOrEqual(t, end, 0)
		// Each declaration of the block is in this file as it is shown.
		for _, decl := range strings.SplitAfter(rest[:end], "\n}\n") {
			assert.Contains(t, string(own), strings.TrimPrefix(decl, "\n"), "a declaration of the guide that is not in consumer_test.go")
		}
		assert.Contains(t, rest[:end], "apistacktest.Connect(")
		rest = rest[end:]
	}
	assert.Equal(t, 1, blocks)
}
