package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/apistack/apistack/gen/sandboxapi"
)

const sandboxUsage = `usage: apistack sandbox [--sandbox-url URL] [--sandbox-token TOKEN] <command> [args]

commands:
  create [--clock frozen|real] [--ttl 1h]   create a sandbox; prints it with its token and credentials
  get ID                                    print a sandbox and its credentials
  requests [--api API] [--operation OP] [--status N] [--since RFC3339] [--after SEQ] [--limit N] ID
                                            print the requests its credentials made (its journal)
  webhooks [--after SEQ] [--limit N] [--wait 30s] ID
                                            print its webhook log: every delivery attempt of its
                                            fax events with the signed headers and body, and the
                                            events still pending (--wait: long-poll for the next)
  redeliver ID EVENT_ID                     deliver one of its fax events again, freshly signed
  inbound-fax [--from E164] [--pages N] [--outcome received|partial|failed] ID
                                            make a fax arrive at its number
  advance ID DURATION | advance --set RFC3339 ID
                                            move its clock on (the work that became due runs first)
  clock ID                                  print its clock
  faults add|list|clear ...                 add, list or clear its faults (apistack sandbox faults)
  reset ID                                  put a sandbox back as it was when created
  delete ID                                 delete a sandbox and everything of it

To forward its webhooks to a local URL as they happen: apistack listen --sandbox ID --forward-to URL.

create needs the sandbox-creator token (or the admin token); the other commands the
sandbox's own token (or the admin token). The URL and token default to
APISTACK_SANDBOX_URL and APISTACK_SANDBOX_TOKEN, then to the sandboxes section of
<data-dir>/demo-credentials.json.
`

// sandboxCommand runs one sandbox API call through the generated client and
// prints the JSON answer.
func sandboxCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sandbox", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ep := bindEndpoint(fs, "sandbox", "sandbox API base URL (the admin port)",
		"token: the sandbox-creator token to create, a sandbox's own token for the rest")
	fs.Usage = func() { fmt.Fprint(stderr, sandboxUsage); fs.PrintDefaults() }
	if err := parseFlags(fs, "sandbox", args); err != nil {
		return err
	}
	url, token, rest, err := ep.resolveArgs(fs, "sandbox", func(c demoCredentials) (string, string) { return c.Sandboxes.Endpoint() },
		"no token: set --sandbox-token or APISTACK_SANDBOX_TOKEN, or run `apistack serve --demo` first")
	if err != nil {
		return err
	}
	client, err := sandboxapi.NewClient(url,
		sandboxapi.WithHTTPClient(&http.Client{Timeout: 60 * time.Second}),
		sandboxapi.WithRequestEditorFn(bearer(token)))
	if err != nil {
		return err
	}
	resp, err := sandboxCall(ctx, client, rest[0], rest[1:], stderr)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return printSandboxAnswer(stdout, resp.StatusCode, body)
}

// sandboxCall parses one command's flags and arguments and makes its call.
func sandboxCall(ctx context.Context, client *sandboxapi.Client, name string, args []string, stderr io.Writer) (*http.Response, error) {
	fs := flag.NewFlagSet("sandbox "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	oneID := func() (string, error) {
		if err := fs.Parse(args); err != nil {
			return "", err
		}
		if fs.NArg() != 1 {
			return "", fmt.Errorf("usage: apistack sandbox %s ID", name)
		}
		return fs.Arg(0), nil
	}
	switch name {
	case "create":
		clockMode := fs.String("clock", "", "frozen or real (default real)")
		ttl := fs.String("ttl", "", "how long the sandbox lives after its last use, e.g. 30m (default 1h)")
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() != 0 {
			return nil, errors.New("usage: apistack sandbox create [--clock frozen|real] [--ttl DURATION]")
		}
		var body sandboxapi.CreateSandboxRequest
		if *clockMode != "" {
			body.Clock = (*sandboxapi.ClockMode)(clockMode)
		}
		if *ttl != "" {
			body.Ttl = ttl
		}
		return client.CreateSandbox(ctx, body)
	case "get":
		id, err := oneID()
		if err != nil {
			return nil, err
		}
		return client.GetSandbox(ctx, id)
	case "reset":
		id, err := oneID()
		if err != nil {
			return nil, err
		}
		return client.ResetSandbox(ctx, id)
	case "delete":
		id, err := oneID()
		if err != nil {
			return nil, err
		}
		return client.DeleteSandbox(ctx, id)
	case "faults":
		return sandboxFaultsCall(ctx, client, args, stderr)
	case "webhooks":
		return sandboxWebhooks(ctx, client, fs, args)
	case "requests":
		var p sandboxapi.ListSandboxRequestsParams
		api := fs.String("api", "", "only the requests to this API (pam, fax, storage, restaurant)")
		op := fs.String("operation", "", "only the requests of this operationId")
		status := fs.Int("status", 0, "only the requests answered with this status")
		since := fs.String("since", "", "only the requests at or after this RFC 3339 instant")
		after := fs.Int64("after", 0, "only the entries after this seq (a page's next_after)")
		limit := fs.Int("limit", 0, "the most entries (1-1000; default 100)")
		id, err := oneID()
		if err != nil {
			return nil, err
		}
		if *api != "" {
			p.Api = (*sandboxapi.ListSandboxRequestsParamsApi)(api)
		}
		if *op != "" {
			p.Operation = op
		}
		if *status != 0 {
			p.Status = status
		}
		if *since != "" {
			t, err := time.Parse(time.RFC3339Nano, *since)
			if err != nil {
				return nil, fmt.Errorf("--since %q is not an RFC 3339 instant: %w", *since, err)
			}
			p.Since = &t
		}
		if *after != 0 {
			p.After = after
		}
		if *limit != 0 {
			p.Limit = limit
		}
		return client.ListSandboxRequests(ctx, id, &p)
	case "advance", "clock":
		return sandboxClockCall(ctx, client, name, fs, args)
	case "redeliver", "inbound-fax":
		return sandboxTriggerCall(ctx, client, name, fs, args)
	}
	return nil, fmt.Errorf("unknown sandbox command %q (create, get, requests, webhooks, redeliver, inbound-fax, advance, clock, faults, reset, delete)", name)
}

// printSandboxAnswer prints the JSON body indented (nothing for a 204), and
// fails on an error status with the API's message.
func printSandboxAnswer(w io.Writer, status int, body []byte) error {
	var v any
	if err := json.Unmarshal(body, &v); err == nil {
		out, _ := json.MarshalIndent(v, "", "  ")
		if status < 300 {
			fmt.Fprintln(w, string(out))
		} else if m, ok := v.(map[string]any); ok && m["message"] != nil {
			return fmt.Errorf("sandbox API answered %d: %v", status, m["message"])
		}
	} else if len(strings.TrimSpace(string(body))) > 0 {
		fmt.Fprintln(w, string(body))
	}
	if status >= 300 {
		return fmt.Errorf("sandbox API answered %d", status)
	}
	return nil
}
