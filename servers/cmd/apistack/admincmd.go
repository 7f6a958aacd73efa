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

	"github.com/apistack/apistack/gen/adminapi"
)

// adminCmd is one command of `apistack admin`: a row of its API's table
// (admincmd_<api>.go), from which the usage text and the dispatch are made.
// Every command is named <api>-<verb>; aliases are earlier names that still
// work.
type adminCmd struct {
	// name is the command's, e.g. "pam-create-team".
	name string
	// aliases are other names it answers to (PAM's unprefixed ones).
	aliases []string
	// args is its synopsis after the name, flags included.
	args string
	// help says what it does, in a line.
	help string
	// minArgs and maxArgs bound the arguments left once the flags are parsed
	// (maxArgs < 0: no bound).
	minArgs, maxArgs int
	// run declares the command's flags on fs (when it has any) and returns
	// the call it makes with the arguments left.
	run func(fs *flag.FlagSet) adminCall
}

// adminCall calls the admin API with a command's arguments.
type adminCall func(ctx context.Context, c adminapi.ClientInterface, args []string) (*http.Response, error)

// noFlags is the run of a command without flags.
func noFlags(call adminCall) func(*flag.FlagSet) adminCall {
	return func(*flag.FlagSet) adminCall { return call }
}

// plainCall is the run of a command without flags that makes the admin
// client's call op (a method expression of adminapi.ClientInterface) with
// no parameters; the command's arguments are not used.
func plainCall(op func(adminapi.ClientInterface, context.Context, ...adminapi.RequestEditorFn) (*http.Response, error)) func(*flag.FlagSet) adminCall {
	return noFlags(func(ctx context.Context, c adminapi.ClientInterface, _ []string) (*http.Response, error) {
		return op(c, ctx)
	})
}

// usage is the command's usage line.
func (c adminCmd) usage() string {
	return strings.TrimSpace("usage: " + c.name + " " + c.args)
}

// adminTables are the commands of every API, in the order usage lists
// them.
var adminTables = [][]adminCmd{pamAdminCommands, faxAdminCommands, storageAdminCommands, restaurantAdminCommands}

// findAdminCommand returns the command named (or aliased) name.
func findAdminCommand(name string) (adminCmd, bool) {
	for _, table := range adminTables {
		for _, c := range table {
			if c.name == name {
				return c, true
			}
			for _, a := range c.aliases {
				if a == name {
					return c, true
				}
			}
		}
	}
	return adminCmd{}, false
}

// helpColumn is where usage starts the commands' help.
const helpColumn = 44

// adminUsage is the usage text of `apistack admin`, made from the tables.
func adminUsage() string {
	var b strings.Builder
	b.WriteString("usage: apistack admin [--admin-url URL] [--admin-token TOKEN] <command> [args]\n\ncommands:\n")
	var aliases []string
	for _, table := range adminTables {
		for _, c := range table {
			left := strings.TrimSpace("  " + c.name + " " + c.args)
			if len(left)+2 >= helpColumn {
				fmt.Fprintf(&b, "  %s\n%s%s\n", left, strings.Repeat(" ", helpColumn), c.help)
			} else {
				fmt.Fprintf(&b, "  %-*s%s\n", helpColumn-2, left, c.help)
			}
			for _, a := range c.aliases {
				aliases = append(aliases, a+" = "+c.name)
			}
		}
	}
	if len(aliases) > 0 {
		b.WriteString("\nearlier names, still accepted:\n")
		for _, a := range aliases {
			fmt.Fprintf(&b, "  %s\n", a)
		}
	}
	b.WriteString(`
The URL and token default to APISTACK_ADMIN_URL and APISTACK_ADMIN_TOKEN, then to
the admin section of <data-dir>/demo-credentials.json.
`)
	return b.String()
}

// adminCommand runs one admin API call through the generated client and
// prints the JSON answer.
func adminCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, url, token, rest, err := endpointCommand{name: "admin", urlHelp: "admin API base URL", tokenHelp: "admin API token", usage: adminUsage(),
		section: func(c demoCredentials) (string, string) { return c.Admin.Endpoint() },
		noToken: "no admin token: set --admin-token or APISTACK_ADMIN_TOKEN, or run `apistack serve --demo` first"}.parse(args, stderr)
	if err != nil {
		return err
	}
	cmd, ok := findAdminCommand(rest[0])
	if !ok {
		fs.Usage()
		return fmt.Errorf("unknown admin command %q", rest[0])
	}
	client, err := adminapi.NewClient(url,
		adminapi.WithHTTPClient(&http.Client{Timeout: 30 * time.Second}),
		adminapi.WithRequestEditorFn(bearer(token)))
	if err != nil {
		return err
	}
	status, body, err := cmd.call(ctx, client, rest[1:], stderr)
	if err != nil {
		return err
	}
	return printAnswer(stdout, status, body)
}

// call parses the command's flags and arguments and makes its call,
// returning the answer's status and body.
func (c adminCmd) call(ctx context.Context, client adminapi.ClientInterface, args []string, stderr io.Writer) (int, []byte, error) {
	fs := newFlagSet(c.name, stderr)
	call := c.run(fs)
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	// A command without flags takes every argument as it is (a name may
	// start with a dash).
	if hasFlags {
		if err := fs.Parse(args); err != nil {
			return 0, nil, err
		}
		args = fs.Args()
	}
	if n := len(args); n < c.minArgs || (c.maxArgs >= 0 && n > c.maxArgs) {
		return 0, nil, errors.New(c.usage())
	}
	return readAnswer(call(ctx, client, args))
}

// printAnswer prints the JSON body indented, and fails on an error status.
func printAnswer(w io.Writer, status int, body []byte) error {
	var v any
	if err := json.Unmarshal(body, &v); err == nil {
		out, _ := json.MarshalIndent(v, "", "  ")
		fmt.Fprintln(w, string(out))
	} else if len(body) > 0 {
		fmt.Fprintln(w, string(body))
	}
	if status >= 300 {
		return fmt.Errorf("admin API answered %d", status)
	}
	return nil
}

// errUsage is the error of a command given arguments it does not take.
func errUsage(synopsis string) error { return errors.New("usage: " + synopsis) }
