package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"

	"github.com/apistack/apistack/gen/sandboxapi"
)

// sandboxWebhooks parses `apistack sandbox webhooks` and lists the log.
func sandboxWebhooks(ctx context.Context, client *sandboxapi.Client, fs *flag.FlagSet, args []string) (*http.Response, error) {
	after := fs.Int64("after", 0, "only the attempts after this seq (the last one read, or next_after)")
	limit := fs.Int("limit", 0, "the most attempts (1-1000; default 100)")
	wait := fs.String("wait", "", "with no attempt after --after, wait this long for one (a Go duration, at most 30s)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() != 1 {
		return nil, fmt.Errorf("usage: apistack sandbox webhooks [--after SEQ] [--limit N] [--wait DURATION] ID")
	}
	var p sandboxapi.ListSandboxWebhooksParams
	if *after != 0 {
		p.After = after
	}
	if *limit != 0 {
		p.Limit = limit
	}
	if *wait != "" {
		p.Wait = wait
	}
	return client.ListSandboxWebhooks(ctx, fs.Arg(0), &p)
}
