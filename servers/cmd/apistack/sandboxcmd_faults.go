package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"

	"github.com/apistack/apistack/gen/sandboxapi"
)

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
	fs := flag.NewFlagSet("sandbox faults "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
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
		body := sandboxapi.FaultRequest{Kind: sandboxapi.FaultKind(fs.Arg(1))}
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if set["api"] {
			body.Api = (*sandboxapi.FaultAPI)(api)
		}
		if set["operation"] {
			body.Operation = op
		}
		if set["count"] {
			body.Count = count
		}
		if set["share"] {
			body.Share = share
		}
		if set["retry-after"] {
			body.RetryAfter = retry
		}
		if set["delay"] {
			body.Delay = delay
		}
		if set["attempt"] {
			body.Attempt = attempt
		}
		return client.AddSandboxFault(ctx, fs.Arg(0), body)
	case "list":
		if err := fs.Parse(args[1:]); err != nil {
			return nil, err
		}
		if fs.NArg() != 1 {
			return nil, errors.New("usage: apistack sandbox faults list ID")
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
