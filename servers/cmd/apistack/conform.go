package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/apistack/apistack/clients/conform"
	"github.com/apistack/apistack/clients/contract"
	"github.com/apistack/apistack/servers/cmd/apistack/internal/harproxy"
	"github.com/apistack/apistack/servers/internal/har"
)

const conformUsage = `usage: apistack conform --api pam|fax|storage|restaurant [--credentials FILE] [--base-url URL] [flags]
       apistack conform --api pam|fax|storage|restaurant --har FILE
       apistack conform --api fax --webhooks --har FILE

With --har, checks a recorded HAR (apistack proxy's, or any other) against
the API's spec offline, one line per violation: no implementation is
contacted. A HAR whose recorder was killed is read up to its last whole
entry.

Runs the black-box conformance suite of one API against any implementation
(apistack, your own fake, a vendor sandbox) and prints one row per check.
Every request and response is checked against the API's spec. Exit status:
0 when every check passed, 1 when one failed, 2 on a usage error.

The credentials file has the shape of data/demo-credentials.json (one section
per API); --base-url replaces the section's URL. The fax checks start a local
receiver (--listen, reached at --receiver-url) for the webhooks and the
document they send: the implementation must reach it.

flags:
`

// checksFailed is the error of a run in which a check failed: exit status 1.
type checksFailed struct{ summary string }

func (c *checksFailed) Error() string { return "conformance checks failed: " + c.summary }

// conformCommand is `apistack conform`.
func conformCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("conform", stderr)
	api := fs.String("api", "", "the API to check: pam, fax, storage or restaurant")
	credentials := credentialsFlag(fs)
	baseURL := fs.String("base-url", "", "the implementation's base URL, replacing the credentials section's")
	timeout := fs.Duration("timeout", time.Minute, "the longest one check may take, waits for a fax's outcome and its webhooks included")
	format := fs.String("format", "table", "output: table or json")
	listen := fs.String("listen", "127.0.0.1:0", "the address of the local receiver of the fax webhooks and document")
	receiverURL := fs.String("receiver-url", "", "the base URL the implementation reaches the receiver at, when not http://<--listen> (a tunnel, a NAT)")
	harFile := fs.String("har", "", "check this recorded HAR against the spec offline instead of running the suite")
	webhooks := fs.Bool("webhooks", false, "with --api fax --har: the recording is of webhook deliveries (specs/fax/webhooks.yaml)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), conformUsage)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, "conform", args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("conform: unexpected argument %q", fs.Arg(0))
	}
	which, err := conform.ParseAPI(*api)
	if err != nil {
		fs.Usage()
		return fmt.Errorf("conform: --api: %w", err)
	}
	if *format != "table" && *format != "json" {
		fs.Usage()
		return fmt.Errorf("conform: --format %q: want table or json", *format)
	}
	if *webhooks && (*harFile == "" || which != conform.Fax) {
		return errors.New("conform: --webhooks checks a recording of fax webhook deliveries: give --api fax and --har")
	}
	if *harFile != "" {
		spec := contract.API(which)
		if *webhooks {
			spec = contract.FaxWebhooks
		}
		return conformHAR(ctx, spec, *harFile, stdout)
	}
	if *timeout <= 0 {
		return errors.New("conform: --timeout must be positive")
	}
	creds, err := conform.ReadCredentials(*credentials)
	if err != nil {
		return err
	}
	report := conform.Run(ctx, conform.Config{API: which, Credentials: creds, BaseURL: *baseURL, Timeout: *timeout,
		Listen: *listen, ReceiverURL: *receiverURL})
	if *format == "json" {
		err = report.WriteJSON(stdout)
	} else {
		err = report.WriteTable(stdout)
	}
	if err != nil {
		return err
	}
	if report.ExitCode() != 0 {
		return &checksFailed{summary: report.Summary()}
	}
	return nil
}

// conformHAR is `apistack conform --har`: every entry of a recording held
// to the spec offline.
func conformHAR(ctx context.Context, api contract.API, path string, stdout io.Writer) error {
	log, err := har.ReadFile(path)
	if err != nil {
		return fmt.Errorf("conform: %w", err)
	}
	findings, checked, err := harproxy.CheckLog(ctx, api, log)
	if err != nil {
		return err
	}
	for _, f := range findings {
		fmt.Fprintln(stdout, f.String())
	}
	summary := fmt.Sprintf("%d entries checked against the %s spec, %d violations", checked, api, len(findings))
	if log.Truncated {
		summary += " (the file ends inside its entries: its recorder was killed; every whole entry was checked)"
	}
	fmt.Fprintln(stdout, summary)
	if len(findings) > 0 {
		return &checksFailed{summary: summary}
	}
	return nil
}
