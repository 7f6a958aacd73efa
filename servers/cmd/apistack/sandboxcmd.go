package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/internal/fixturefile"
)

const sandboxUsage = `usage: apistack sandbox [--sandbox-url URL] [--sandbox-token TOKEN] <command> [args]

commands:
  create [--clock frozen|real] [--ttl 1h] [--fixture FILE | --snapshot SNAPSHOT_ID]
                                            create a sandbox; prints it with its token and credentials
                                            (--fixture: from a fixture document, JSON or YAML, see
                                            specs/sandbox/fixture.schema.json; --snapshot: a fork)
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
  snapshot create [--ttl 24h] ID | snapshot list ID | snapshot get ID SNAPSHOT_ID |
  snapshot delete ID SNAPSHOT_ID            freeze its state to fork sandboxes from (create --snapshot)
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
	_, url, token, rest, err := endpointCommand{name: "sandbox", urlHelp: "sandbox API base URL (the admin port)",
		tokenHelp: "token: the sandbox-creator token to create, a sandbox's own token for the rest", usage: sandboxUsage,
		section: func(c demoCredentials) (string, string) { return c.Sandboxes.Endpoint() },
		noToken: "no token: set --sandbox-token or APISTACK_SANDBOX_TOKEN, or run `apistack serve --demo` first"}.parse(args, stderr)
	if err != nil {
		return err
	}
	client, err := sandboxapi.NewClient(url,
		sandboxapi.WithHTTPClient(&http.Client{Timeout: 60 * time.Second}),
		sandboxapi.WithRequestEditorFn(bearer(token)))
	if err != nil {
		return err
	}
	status, body, err := readAnswer(sandboxCall(ctx, client, rest[0], rest[1:], stderr))
	if err != nil {
		return err
	}
	return printSandboxAnswer(stdout, status, body)
}

// sandboxCall parses one command's flags and arguments and makes its call.
func sandboxCall(ctx context.Context, client *sandboxapi.Client, name string, args []string, stderr io.Writer) (*http.Response, error) {
	fs := newFlagSet("sandbox "+name, stderr)
	oneID := func() (string, error) {
		if err := parseArgs(fs, args, 1, "usage: apistack sandbox "+name+" ID"); err != nil {
			return "", err
		}
		return fs.Arg(0), nil
	}
	switch name {
	case "create":
		clockMode := fs.String("clock", "", "frozen or real (default real)")
		ttl := fs.String("ttl", "", "how long the sandbox lives after its last use, e.g. 30m (default 1h)")
		fixture := fs.String("fixture", "", "a fixture document (JSON or YAML) the sandbox starts from")
		snapshot := fs.String("snapshot", "", "a snapshot's id: the sandbox is a fork of it")
		if err := parseArgs(fs, args, 0, "usage: apistack sandbox create [--clock frozen|real] [--ttl DURATION] [--fixture FILE | --snapshot SNAPSHOT_ID]"); err != nil {
			return nil, err
		}
		body := map[string]any{}
		for k, v := range map[string]*string{"clock": given(clockMode), "ttl": given(ttl), "snapshot": given(snapshot)} {
			if v != nil {
				body[k] = *v
			}
		}
		if *fixture != "" {
			doc, err := fixturefile.Read(*fixture)
			if err != nil {
				return nil, err
			}
			body["fixture"] = doc
		}
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		return client.CreateSandboxWithBody(ctx, "application/json", bytes.NewReader(raw))
	case "snapshot":
		return sandboxSnapshotCall(ctx, client, args, stderr)
	case "get", "reset", "delete":
		id, err := oneID()
		if err != nil {
			return nil, err
		}
		call := map[string]func(context.Context, string, ...sandboxapi.RequestEditorFn) (*http.Response, error){
			"get": client.GetSandbox, "reset": client.ResetSandbox, "delete": client.DeleteSandbox}[name]
		return call(ctx, id)
	case "faults":
		return sandboxFaultsCall(ctx, client, args, stderr)
	case "webhooks":
		return sandboxWebhooks(ctx, client, fs, args)
	case "requests":
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
		p := sandboxapi.ListSandboxRequestsParams{Api: (*sandboxapi.ListSandboxRequestsParamsApi)(given(api)), Operation: given(op),
			Status: given(status), After: given(after), Limit: given(limit)}
		if *since != "" {
			t, err := time.Parse(time.RFC3339Nano, *since)
			if err != nil {
				return nil, fmt.Errorf("--since %q is not an RFC 3339 instant: %w", *since, err)
			}
			p.Since = &t
		}
		return client.ListSandboxRequests(ctx, id, &p)
	case "advance", "clock":
		return sandboxClockCall(ctx, client, name, fs, args)
	case "redeliver", "inbound-fax":
		return sandboxTriggerCall(ctx, client, name, fs, args)
	}
	return nil, fmt.Errorf("unknown sandbox command %q (create, get, requests, webhooks, redeliver, inbound-fax, advance, clock, faults, snapshot, reset, delete)", name)
}

// sandboxSnapshotCall runs `apistack sandbox snapshot create|list|get|delete`.
func sandboxSnapshotCall(ctx context.Context, client *sandboxapi.Client, args []string, stderr io.Writer) (*http.Response, error) {
	const usage = "usage: apistack sandbox snapshot create [--ttl DURATION] ID | list ID | get ID SNAPSHOT_ID | delete ID SNAPSHOT_ID"
	if len(args) == 0 {
		return nil, errors.New(usage)
	}
	fs := newFlagSet("sandbox snapshot "+args[0], stderr)
	switch args[0] {
	case "create":
		ttl := fs.String("ttl", "", "how long the snapshot lives, e.g. 2h (default 24h)")
		if err := parseArgs(fs, args[1:], 1, usage); err != nil {
			return nil, err
		}
		return client.CreateSandboxSnapshot(ctx, fs.Arg(0), sandboxapi.CreateSnapshotRequest{Ttl: given(ttl)})
	case "list":
		if err := parseArgs(fs, args[1:], 1, usage); err != nil {
			return nil, err
		}
		return client.ListSandboxSnapshots(ctx, fs.Arg(0))
	case "get", "delete":
		if err := parseArgs(fs, args[1:], 2, usage); err != nil {
			return nil, err
		}
		if args[0] == "get" {
			return client.GetSandboxSnapshot(ctx, fs.Arg(0), fs.Arg(1))
		}
		return client.DeleteSandboxSnapshot(ctx, fs.Arg(0), fs.Arg(1))
	}
	return nil, errors.New(usage)
}

// parseArgs parses args into fs and wants n arguments after the flags:
// usage is the error otherwise.
func parseArgs(fs *flag.FlagSet, args []string, n int, usage string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != n {
		return errors.New(usage)
	}
	return nil
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

// sandboxClockUsage is the usage of the clock commands.
const sandboxClockUsage = `usage: apistack sandbox advance ID DURATION      move the sandbox's clock on by a Go duration (10m, 1h30m)
       apistack sandbox advance --set RFC3339 ID   move it to an instant (never back)
       apistack sandbox clock ID                   print the sandbox's clock`

// sandboxClockCall makes the call of the clock commands (advance, clock):
// an advance answers once the work that became due has run.
func sandboxClockCall(ctx context.Context, client *sandboxapi.Client, name string, fs *flag.FlagSet, args []string) (*http.Response, error) {
	set := fs.String("set", "", "the RFC 3339 instant to set the clock to, instead of a DURATION")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if name == "clock" {
		if fs.NArg() != 1 || *set != "" {
			return nil, errors.New(sandboxClockUsage)
		}
		return client.GetSandboxClock(ctx, fs.Arg(0))
	}
	var body sandboxapi.ClockChange
	switch {
	case *set != "" && fs.NArg() == 1:
		t, err := time.Parse(time.RFC3339Nano, *set)
		if err != nil {
			return nil, fmt.Errorf("--set %q is not an RFC 3339 instant: %w", *set, err)
		}
		body.Set = &t
	case *set == "" && fs.NArg() == 2:
		d := fs.Arg(1)
		if _, err := time.ParseDuration(d); err != nil {
			return nil, fmt.Errorf("%q is not a Go duration such as 10m or 1h30m", d)
		}
		body.Advance = &d
	default:
		return nil, errors.New(sandboxClockUsage)
	}
	return client.AdvanceSandboxClock(ctx, fs.Arg(0), body)
}

const sandboxFaultsUsage = `usage: apistack sandbox faults add [flags] ID KIND
       apistack sandbox faults list ID
       apistack sandbox faults clear ID [FAULT_ID]

KIND is rate-limited, unavailable, internal-error, slow or drop (request faults: --api
needed) or webhook-duplicate, webhook-reorder, webhook-fail (the sandbox's fax webhook
deliveries). clear deletes every fault of the sandbox, or the one FAULT_ID.
`

// sandboxFaultsCall runs `apistack sandbox faults add|list|clear`.
func sandboxFaultsCall(ctx context.Context, client *sandboxapi.Client, args []string, stderr io.Writer) (*http.Response, error) {
	if len(args) == 0 {
		fmt.Fprint(stderr, sandboxFaultsUsage)
		return nil, errors.New("no faults command given (add, list, clear)")
	}
	fs := newFlagSet("sandbox faults "+args[0], stderr)
	fs.Usage = func() { fmt.Fprint(stderr, sandboxFaultsUsage); fs.PrintDefaults() }
	switch args[0] {
	case "add":
		api := fs.String("api", "", "the API whose requests the fault takes (pam, fax, storage, restaurant)")
		op := fs.String("operation", "", "only requests of this operationId (default every operation)")
		count := fs.Int("count", 0, "how many of the next matching requests (0 with no --share: every one)")
		share := fs.Float64("share", 0, "the chance, in (0, 1], that a matching request is taken")
		retry := fs.String("retry-after", "", "what a 429 or 503 tells the caller to wait, e.g. 2s")
		delay := fs.String("delay", "", "how long a slow fault holds a request, e.g. 1500ms (at most 30s)")
		attempt := fs.Int("attempt", 0, "the delivery attempt a webhook-fail fault fails (default 1)")
		if err := fs.Parse(args[1:]); err != nil {
			return nil, err
		}
		if fs.NArg() != 2 {
			fs.Usage()
			return nil, errors.New("usage: apistack sandbox faults add [flags] ID KIND")
		}
		return client.AddSandboxFault(ctx, fs.Arg(0), sandboxapi.FaultRequest{
			Kind:       sandboxapi.FaultKind(fs.Arg(1)),
			Api:        (*sandboxapi.FaultAPI)(flagged(fs, "api", api)),
			Operation:  flagged(fs, "operation", op),
			Count:      flagged(fs, "count", count),
			Share:      flagged(fs, "share", share),
			RetryAfter: flagged(fs, "retry-after", retry),
			Delay:      flagged(fs, "delay", delay),
			Attempt:    flagged(fs, "attempt", attempt),
		})
	case "list":
		if err := parseArgs(fs, args[1:], 1, "usage: apistack sandbox faults list ID"); err != nil {
			return nil, err
		}
		return client.ListSandboxFaults(ctx, fs.Arg(0))
	case "clear":
		if err := fs.Parse(args[1:]); err != nil {
			return nil, err
		}
		switch fs.NArg() {
		case 1:
			return client.ClearSandboxFaults(ctx, fs.Arg(0))
		case 2:
			return client.DeleteSandboxFault(ctx, fs.Arg(0), fs.Arg(1))
		}
		return nil, errors.New("usage: apistack sandbox faults clear ID [FAULT_ID]")
	}
	fs.Usage()
	return nil, fmt.Errorf("unknown faults command %q (add, list, clear)", args[0])
}

// sandboxTriggerCall parses `apistack sandbox redeliver ID EVENT_ID` and
// `apistack sandbox inbound-fax [flags] ID` and makes the call.
func sandboxTriggerCall(ctx context.Context, client *sandboxapi.Client, name string, fs *flag.FlagSet, args []string) (*http.Response, error) {
	if name == "redeliver" {
		if err := parseArgs(fs, args, 2, "usage: apistack sandbox redeliver ID EVENT_ID"); err != nil {
			return nil, err
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
	if err := parseArgs(fs, args, 1, "usage: apistack sandbox inbound-fax [--from E164] [--pages N] [--outcome received|partial|failed] ID"); err != nil {
		return nil, err
	}
	return client.TriggerInboundFax(ctx, fs.Arg(0),
		sandboxapi.InboundFaxRequest{From: given(from), Pages: given(pages), Outcome: (*sandboxapi.InboundFaxRequestOutcome)(given(outcome))})
}

// sandboxWebhooks parses `apistack sandbox webhooks` and lists the log.
func sandboxWebhooks(ctx context.Context, client *sandboxapi.Client, fs *flag.FlagSet, args []string) (*http.Response, error) {
	after := fs.Int64("after", 0, "only the attempts after this seq (the last one read, or next_after)")
	limit := fs.Int("limit", 0, "the most attempts (1-1000; default 100)")
	wait := fs.String("wait", "", "with no attempt after --after, wait this long for one (a Go duration, at most 30s)")
	if err := parseArgs(fs, args, 1, "usage: apistack sandbox webhooks [--after SEQ] [--limit N] [--wait DURATION] ID"); err != nil {
		return nil, err
	}
	return client.ListSandboxWebhooks(ctx, fs.Arg(0), &sandboxapi.ListSandboxWebhooksParams{After: given(after), Limit: given(limit), Wait: given(wait)})
}
