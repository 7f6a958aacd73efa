package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"time"

	"github.com/apistack/apistack/gen/sandboxapi"
)

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
