package fax

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/descriptor"
)

// apiName is the fax API's name.
const apiName = "fax"

// API describes the fax API to the assemblers (servers/stack, `apistack
// serve`, the test kit). The stack runs the server's simulator and webhook
// sender (Run) itself.
var API = descriptor.API[Settings, *Server, DemoCredentials]{
	Name: apiName, Files: migrationFiles, SealsSecrets: true, New: newFromEnv, Seed: seedTenants,
	Reset: resetTenants, Delete: deleteTenants, Advance: advanceTenants, Fixture: applyFixture, Copy: copyTenants,
}

// newFromEnv is the fax server of an assembler. A clock other than the
// system's is a test's: the simulator takes at once the steps a moved clock
// has passed.
func newFromEnv(ctx context.Context, e descriptor.Env, s Settings) (*Server, error) {
	_, system := e.Clock.(clock.System)
	return New(ctx, Config{Deps: e.Deps, MasterKey: e.MasterKey, Settings: s,
		CatchUpSteps: e.Clock != nil && !system, WebhookTransport: e.WebhookTransport})
}

// The admin port's fax demo routes (servers/stack; specs/admin, tag fax): a
// sample document to fax and a webhook inbox, so the demo works offline.
const (
	// SamplePath serves a sample PDF.
	SamplePath = "/fax/sample.pdf"
	// InboxPath takes webhook deliveries (POST) and lists them (GET, admin
	// token); a tenant set's webhooks go there unless told otherwise.
	InboxPath = "/fax/webhook_inbox"
)

// DemoCredentials is the fax section of demo-credentials.json (DESIGN.md
// section 5).
type DemoCredentials struct {
	BaseURL          string `json:"base_url"`
	APIKey           string `json:"api_key"`
	ConnectionID     string `json:"connection_id"`
	From             string `json:"from"`
	WebhookPublicKey string `json:"webhook_public_key"`
}

// The demo set's sending number, and where earlier versions pointed the
// demo application (nothing listens there; a restart moves it to the inbox).
const (
	demoFrom             = "+13125550100"
	oldDemoWebhookURL    = "http://127.0.0.1:9/fax-webhooks"
	senderNumbersOfASet  = "+1312555"
	senderNumbersInRange = 7000
)

// senderNumber is the set's sending number: +1 312 555 0100 for the demo
// set, else one of +1 312 555 1000-7999 chosen by the set's name (outside
// the 08NN test numbers that choose outcomes).
func senderNumber(set string) string {
	if set == descriptor.DemoSet {
		return demoFrom
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(set))
	return fmt.Sprintf("%s%04d", senderNumbersOfASet, 1000+h.Sum32()%senderNumbersInRange)
}

// nextSenderNumber is the sending number after n in the range of the sets'
// numbers, wrapping around.
func nextSenderNumber(n string) string {
	var i int
	_, _ = fmt.Sscanf(strings.TrimPrefix(n, senderNumbersOfASet), "%d", &i)
	return fmt.Sprintf("%s%04d", senderNumbersOfASet, 1000+(i-1000+1)%senderNumbersInRange)
}

// seedTenants creates the set's account (named after the set), its API key,
// an application with an outbound voice profile and the sending number,
// keeping whatever a previous run created that still works. The
// application's webhooks go to set.WebhookURL, by default the admin port's
// inbox; a webhook URL the user set (anything but an earlier inbox) is kept.
func seedTenants(ctx context.Context, srv *Server, set descriptor.TenantSet, previous *DemoCredentials) (*DemoCredentials, error) {
	s := srv.Operator()
	inboxURL := set.WebhookURL
	if inboxURL == "" {
		inboxURL = set.URLs["admin"] + InboxPath
	}
	acct, err := s.CreateAccount(ctx, set.Name)
	if errors.Is(err, ErrAlreadyExists) {
		acct, err = s.AccountByName(ctx, set.Name)
	}
	if err != nil {
		return nil, err
	}
	out := &DemoCredentials{BaseURL: set.URLs[apiName], From: senderNumber(set.Name), WebhookPublicKey: base64.StdEncoding.EncodeToString(s.WebhookPublicKey())}
	if previous != nil && s.APIKeyWorks(ctx, acct.ID, previous.APIKey) {
		out.APIKey = previous.APIKey
	} else if _, out.APIKey, err = s.IssueAPIKey(ctx, acct.ID); err != nil {
		return nil, err
	}
	if previous != nil && previous.ConnectionID != "" {
		if app, err := s.ApplicationOf(ctx, acct.ID, previous.ConnectionID); err == nil && app.OutboundVoiceProfileID != "" {
			out.ConnectionID = app.ID
			ours := app.WebhookURL == oldDemoWebhookURL || strings.HasSuffix(app.WebhookURL, InboxPath)
			if ours && app.WebhookURL != inboxURL {
				if err := s.setApplicationWebhookURL(ctx, acct.ID, app.ID, inboxURL); err != nil {
					return nil, err
				}
			}
		}
	}
	if out.ConnectionID == "" {
		profile, err := s.CreateOutboundVoiceProfile(ctx, acct.ID, set.Name)
		if err != nil {
			return nil, err
		}
		app, err := s.createApplication(ctx, Application{AccountID: acct.ID, Name: set.Name, WebhookURL: inboxURL, OutboundVoiceProfileID: profile})
		if err != nil {
			return nil, err
		}
		out.ConnectionID = app.ID
	}
	if previous != nil && previous.From != "" && previous.From != out.From {
		if n, err := s.store.number(ctx, previous.From); err == nil && n.AccountID == acct.ID {
			out.From = previous.From
		}
	}
	// Another set may hold the number its name chose: the next free one is
	// the set's (the demo set's number is fixed).
	for tries := 0; ; tries++ {
		err := s.AssignNumber(ctx, acct.ID, out.From, out.ConnectionID)
		if err == nil {
			return out, nil
		}
		if !errors.Is(err, ErrAlreadyExists) || set.Name == descriptor.DemoSet || tries >= senderNumbersInRange {
			return nil, err
		}
		out.From = nextSenderNumber(out.From)
	}
}
