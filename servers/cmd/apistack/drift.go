package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/apistack/apistack/clients/conform"
	"github.com/apistack/apistack/clients/contract"
	"github.com/apistack/apistack/servers/cmd/apistack/internal/drift"
	"github.com/apistack/apistack/servers/internal/har"
)

const driftUsage = `usage: apistack drift --api pam|fax|storage|restaurant --har FILE --target URL [--credentials FILE]

Replays each request of a recorded HAR (apistack proxy's, a browser's,
mitmproxy's) against a target, an apistack stand-in, with the credentials
file's credentials in place of the recorded ones, and compares the answers
by shape, not value: the status, the response headers the spec declares,
and the body member by member (present or absent, JSON type, enum
membership), values the spec marks as ids, timestamps or opaque tokens
compared by presence alone. Prints one line per difference naming the
entry, the operation and the field, then a summary.

Exit status: 0 when the target answered every request as recorded, 1 when
any difference was found, 2 on a usage error.

flags:
`

// driftCommand is `apistack drift`.
func driftCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("drift", stderr)
	api := fs.String("api", "", "the API recorded: pam, fax, storage or restaurant")
	harFile := fs.String("har", "", "the HAR file whose requests are replayed")
	target := fs.String("target", "", "the stand-in's base URL (the credentials section's when empty)")
	credentials := credentialsFlag(fs)
	if err := parseCommandFlags(fs, driftUsage, args); err != nil {
		return err
	}
	which, err := conform.ParseAPI(*api)
	if err != nil {
		return fmt.Errorf("drift: --api: %w (see apistack drift -h)", err)
	}
	if *harFile == "" {
		return errors.New("drift: --har is required (see apistack drift -h)")
	}
	creds, err := conform.ReadCredentials(*credentials)
	if err != nil {
		return fmt.Errorf("drift: %w", err)
	}
	if *target == "" {
		*target = sectionURL(which, creds)
	}
	log, err := har.ReadFile(*harFile)
	if err != nil {
		return fmt.Errorf("drift: %w", err)
	}
	if log.Truncated {
		fmt.Fprintf(stdout, "note: %s ends inside its entries (its recorder was killed): replaying its %d whole entries\n", *harFile, len(log.Entries))
	}
	res, err := drift.Run(ctx, drift.Config{API: contract.API(which), Log: log, Target: *target, Credentials: creds})
	if res != nil {
		for _, d := range res.Differences {
			fmt.Fprintln(stdout, d.String())
		}
		for _, s := range res.Skipped {
			fmt.Fprintln(stdout, "skipped", s)
		}
		fmt.Fprintln(stdout, res.Summary())
	}
	if err != nil {
		return err
	}
	if len(res.Differences) > 0 {
		return &checksFailed{summary: res.Summary()}
	}
	return nil
}

// sectionURL is the base URL of api's section of creds.
func sectionURL(api conform.API, creds conform.Credentials) string {
	switch {
	case api == conform.PAM && creds.PAM != nil:
		return creds.PAM.BaseURL
	case api == conform.Fax && creds.Fax != nil:
		return creds.Fax.BaseURL
	case api == conform.Storage && creds.Storage != nil:
		return creds.Storage.Endpoint
	case api == conform.Restaurant && creds.Restaurant != nil:
		return creds.Restaurant.BaseURL
	}
	return ""
}

// buildVersion is the module version apistack was built as ("devel" from a
// work tree).
func buildVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "devel"
}
