package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"github.com/apistack/apistack/gen/sandboxapi"
)

// sandboxTriggerCall parses `apistack sandbox redeliver ID EVENT_ID` and
// `apistack sandbox inbound-fax [flags] ID` and makes the call.
func sandboxTriggerCall(ctx context.Context, client *sandboxapi.Client, name string, fs *flag.FlagSet, args []string) (*http.Response, error) {
	if name == "redeliver" {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() != 2 {
			return nil, fmt.Errorf("usage: apistack sandbox redeliver ID EVENT_ID")
		}
		event, err := uuid.Parse(fs.Arg(1))
		if err != nil {
			return nil, fmt.Errorf("event id %q is not a UUID: %w", fs.Arg(1), err)
		}
		return client.RedeliverSandboxWebhook(ctx, fs.Arg(0), event)
	}
	from := fs.String("from", "", "the sender's number in E.164 form (default +14155550123)")
	pages := fs.Int("pages", 0, "the pages of the sample PDF received (default 1)")
	outcome := fs.String("outcome", "", "received (default), partial or failed")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() != 1 {
		return nil, fmt.Errorf("usage: apistack sandbox inbound-fax [--from E164] [--pages N] [--outcome received|partial|failed] ID")
	}
	var body sandboxapi.InboundFaxRequest
	if *from != "" {
		body.From = from
	}
	if *pages != 0 {
		body.Pages = pages
	}
	if *outcome != "" {
		body.Outcome = (*sandboxapi.InboundFaxRequestOutcome)(outcome)
	}
	return client.TriggerInboundFax(ctx, fs.Arg(0), body)
}
