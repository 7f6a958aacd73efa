// Command apistack runs the apistack servers and drives their admin API.
//
//	apistack serve [--demo] [flags]   every API on its own port
//	apistack admin <command> [args]   the admin API from the command line
//	apistack sandbox <command> [args] the sandbox API from the command line
//	apistack conform --api API [flags] the conformance suite against any implementation
//	apistack listen --sandbox ID --forward-to URL  a sandbox's webhooks forwarded to a local URL
//	apistack creds [--data-dir DIR] SECTION.KEY   one value of demo-credentials.json
//	apistack proxy --api API --upstream URL  a validating, recording proxy in front of a real service
//	apistack drift --api API --har FILE --target URL  a recording replayed against a stand-in, compared by shape
//
// Every flag can also be set with an APISTACK_* environment variable named
// after it (--pam-addr is APISTACK_PAM_ADDR); a flag on the command line wins.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		os.Exit(exitStatus(err, os.Stderr))
	}
}

const usage = `usage:
  apistack serve [--demo] [flags]    run every API on its own port (see apistack serve -h)
  apistack admin <command> [args]    drive the admin API (see apistack admin -h)
  apistack sandbox <command> [args]  create, inspect, reset and delete sandboxes (see apistack sandbox -h)
  apistack conform --api API [flags] check an implementation of an API (see apistack conform -h)
  apistack listen --sandbox ID --forward-to URL  forward a sandbox's webhooks to a local URL (see apistack listen -h)
  apistack creds [--data-dir DIR] SECTION.KEY   print one value of demo-credentials.json (see apistack creds -h)
  apistack proxy --api API --upstream URL  check and record a real service's traffic as HAR (see apistack proxy -h)
  apistack drift --api API --har FILE --target URL  replay a HAR against a stand-in, compare by shape (see apistack drift -h)
`

// exitStatus reports err and returns the process status: 1 when conformance
// checks failed (the table says which), a recording broke the spec or drifted
// from the stand-in, 2 for any other error.
func exitStatus(err error, stderr io.Writer) int {
	var failed *checksFailed
	if errors.As(err, &failed) {
		return 1
	}
	if !errors.Is(err, flag.ErrHelp) {
		// One line: an error of several (a driver's, one per address
		// tried) is joined with semicolons.
		msg := strings.Join(strings.FieldsFunc(err.Error(), func(r rune) bool { return r == '\n' }), "; ")
		fmt.Fprintln(stderr, "apistack:", strings.Join(strings.Fields(msg), " "))
	}
	return 2
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	if command, ok := commands[args[0]]; ok {
		return command(ctx, args[1:], stdout, stderr)
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", args[0])
	}
}

// commands are apistack's commands by name; each is given the arguments
// that follow its name.
var commands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) error{
	"serve":   serve,
	"admin":   adminCommand,
	"sandbox": sandboxCommand,
	"conform": conformCommand,
	"listen":  listenCommand,
	"creds":   credsCommand,
	"proxy":   proxyCommand,
	"drift":   driftCommand,
}

// envName is the environment variable of a flag: --pam-addr -> APISTACK_PAM_ADDR.
func envName(flagName string) string {
	return "APISTACK_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// flagDefaults sets every flag of fs that was not given on the command line
// from its APISTACK_* variable.
func flagDefaults(fs *flag.FlagSet) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || err != nil {
			return
		}
		if v, ok := os.LookupEnv(envName(f.Name)); ok {
			if e := f.Value.Set(v); e != nil {
				err = fmt.Errorf("%s=%q: %w", envName(f.Name), v, e)
			}
		}
	})
	return err
}

// newFlagSet is the flag set of a command (name), its errors and usage
// written to stderr.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// credentialsFlag declares --credentials, the credentials file of the
// implementation a command talks to.
func credentialsFlag(fs *flag.FlagSet) *string {
	return fs.String("credentials", "data/demo-credentials.json", "the credentials file (the shape of data/demo-credentials.json)")
}

// parseCommandFlags parses the flags of a command that takes no arguments
// (fs is named after it): -h prints usage and then the flags; a flag not
// given takes its APISTACK_* variable; an argument is refused with a
// pointer to -h.
func parseCommandFlags(fs *flag.FlagSet, usage string, args []string) error {
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, fs.Name(), args); err != nil {
		return err
	}
	if err := flagDefaults(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q (see apistack %[1]s -h)", fs.Name(), fs.Arg(0))
	}
	return nil
}

// parseFlags parses args into fs. A bad flag or value is one line, the
// flag package's message and a pointer to command's -h, rather than the
// whole usage; -h and --help print the usage (fs.Usage) and return
// flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, command string, args []string) error {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = usage
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return err
	case err != nil:
		return fmt.Errorf("%w (see apistack %s -h)", err, command)
	}
	return nil
}
