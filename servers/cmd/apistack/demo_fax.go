package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apistack/apistack/servers/fax"
)

// faxCredentials is the fax section of demo-credentials.json (DESIGN.md
// section 5).
type faxCredentials struct {
	BaseURL          string `json:"base_url"`
	APIKey           string `json:"api_key"`
	ConnectionID     string `json:"connection_id"`
	From             string `json:"from"`
	WebhookPublicKey string `json:"webhook_public_key"`
}

// The demo fax tenant.
const (
	demoFaxAccount = "demo"
	demoFaxFrom    = "+13125550100"
	// oldDemoFaxWebhookURL is where earlier versions pointed the demo
	// application (nothing listens there); a restart moves it to the inbox.
	oldDemoFaxWebhookURL = "http://127.0.0.1:9/fax-webhooks"
)

// bootstrapFaxDemo creates the demo account, its API key, an application
// with an outbound voice profile and the sending number, keeping whatever a
// previous run created that still works. The application's webhooks go to
// inboxURL, the admin port's webhook inbox; a webhook URL the user set
// (anything but an earlier inbox) is kept.
func bootstrapFaxDemo(ctx context.Context, s *fax.Server, previous *faxCredentials, inboxURL string) (*faxCredentials, error) {
	acct, err := s.CreateAccount(ctx, demoFaxAccount)
	if errors.Is(err, fax.ErrAlreadyExists) {
		acct, err = s.AccountByName(ctx, demoFaxAccount)
	}
	if err != nil {
		return nil, err
	}
	out := &faxCredentials{From: demoFaxFrom, WebhookPublicKey: base64.StdEncoding.EncodeToString(s.WebhookPublicKey())}
	if previous != nil && s.APIKeyWorks(ctx, acct.ID, previous.APIKey) {
		out.APIKey = previous.APIKey
	} else if _, out.APIKey, err = s.IssueAPIKey(ctx, acct.ID); err != nil {
		return nil, err
	}
	if previous != nil && previous.ConnectionID != "" {
		if app, err := s.ApplicationOf(ctx, acct.ID, previous.ConnectionID); err == nil && app.OutboundVoiceProfileID != "" {
			out.ConnectionID = app.ID
			ours := app.WebhookURL == oldDemoFaxWebhookURL || strings.HasSuffix(app.WebhookURL, faxInboxPath)
			if ours && app.WebhookURL != inboxURL {
				if err := s.SetApplicationWebhookURL(ctx, acct.ID, app.ID, inboxURL); err != nil {
					return nil, err
				}
			}
		}
	}
	if out.ConnectionID == "" {
		profile, err := s.CreateOutboundVoiceProfile(ctx, acct.ID, "demo")
		if err != nil {
			return nil, err
		}
		app, err := s.CreateApplication(ctx, fax.Application{AccountID: acct.ID, Name: "demo", WebhookURL: inboxURL, OutboundVoiceProfileID: profile})
		if err != nil {
			return nil, err
		}
		out.ConnectionID = app.ID
	}
	if err := s.AssignNumber(ctx, acct.ID, demoFaxFrom, out.ConnectionID); err != nil {
		return nil, err
	}
	return out, nil
}

// printFaxDemo prints the fax API's lines of the demo banner: a send line
// whose document is the admin port's sample PDF and a line to watch the
// events arrive in the admin port's webhook inbox, so the demo works offline.
func printFaxDemo(w io.Writer, f *faxCredentials, a *adminCredentials) {
	if f == nil || a == nil {
		return
	}
	fmt.Fprintf(w, "fax        %s  (docs: %s/docs/)\n", f.BaseURL, f.BaseURL)
	fmt.Fprintf(w, "  send:    curl -s -X POST %s/v2/faxes -H 'Authorization: Bearer %s' --data-urlencode 'media_url=%s%s' --data-urlencode 'connection_id=%s' --data-urlencode 'to=+13125550800' --data-urlencode 'from=%s'\n",
		f.BaseURL, f.APIKey, a.BaseURL, faxSamplePath, f.ConnectionID, f.From)
	fmt.Fprintf(w, "  list:    curl -s %s/v2/faxes -H 'Authorization: Bearer %s'\n", f.BaseURL, f.APIKey)
	fmt.Fprintf(w, "  webhooks: curl -s %s%s -H 'Authorization: Bearer %s'  (+1 312 555 08NN test numbers choose outcomes; README)\n", a.BaseURL, faxInboxPath, a.Token)
}
