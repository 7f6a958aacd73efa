package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
)

// defaultAdminURL is the admin port's address under `make run`.
const defaultAdminURL = "http://127.0.0.1:8089"

// endpoint is where a command of the admin port (admin, sandbox) sends its
// calls: a base URL and a bearer token, from the command's flags (and their
// APISTACK_* variables), else from a section of the demo credentials.
type endpoint struct {
	url, token, dataDir *string
}

// bindEndpoint declares --<prefix>-url, --<prefix>-token and --data-dir on fs.
func bindEndpoint(fs *flag.FlagSet, prefix, urlHelp, tokenHelp string) endpoint {
	return endpoint{
		url:     fs.String(prefix+"-url", "", urlHelp),
		token:   fs.String(prefix+"-token", "", tokenHelp),
		dataDir: fs.String("data-dir", "data", "where demo-credentials.json is"),
	}
}

// resolve returns the base URL and the token: the flags' values, what
// section picks from <data-dir>/demo-credentials.json for those left empty,
// and the admin port's default address for the URL. noToken is the error
// when no token is found anywhere.
func (e endpoint) resolve(section func(demoCredentials) (url, token string), noToken string) (url, token string, err error) {
	url, token = *e.url, *e.token
	if url == "" || token == "" {
		creds, err := readCredentials(filepath.Join(*e.dataDir, "demo-credentials.json"))
		if err != nil {
			return "", "", err
		}
		u, t := section(creds)
		if url == "" {
			url = u
		}
		if token == "" {
			token = t
		}
	}
	if url == "" {
		url = defaultAdminURL
	}
	if token == "" {
		return "", "", errors.New(noToken)
	}
	return url, token, nil
}

// resolveArgs is resolve for a command whose flags fs has parsed: the flags
// left empty take their APISTACK_* variables first. rest is what follows the
// flags: a subcommand and its arguments (none prints the usage and is an
// error).
func (e endpoint) resolveArgs(fs *flag.FlagSet, command string, section func(demoCredentials) (url, token string), noToken string) (url, token string, rest []string, err error) {
	if err := flagDefaults(fs); err != nil {
		return "", "", nil, err
	}
	if url, token, err = e.resolve(section, noToken); err != nil {
		return "", "", nil, err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return "", "", nil, fmt.Errorf("no %s command given", command)
	}
	return url, token, fs.Args(), nil
}

// given is v, or nil when *v is its type's zero value: an optional field of
// a request, set from a flag only when the flag has a value.
func given[T comparable](v *T) *T {
	var zero T
	if *v == zero {
		return nil
	}
	return v
}

// flagged is v when fs's flag name was set on the command line (even to its
// zero value), else nil.
func flagged[T any](fs *flag.FlagSet, name string, v *T) *T {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	if !set {
		return nil
	}
	return v
}

// endpointCommand is a command of the admin port (admin, sandbox): its
// name (its flags' prefix), its flags' help, its usage text, and where the
// demo credentials keep its endpoint (section; noToken is the error when no
// token is found anywhere).
type endpointCommand struct {
	name, urlHelp, tokenHelp, usage string
	section                         func(demoCredentials) (url, token string)
	noToken                         string
}

// parse parses the command's flags from args and resolves its endpoint:
// the base URL, the token, and the subcommand with its arguments (rest).
// fs's Usage prints the command's usage.
func (c endpointCommand) parse(args []string, stderr io.Writer) (fs *flag.FlagSet, url, token string, rest []string, err error) {
	fs = newFlagSet(c.name, stderr)
	ep := bindEndpoint(fs, c.name, c.urlHelp, c.tokenHelp)
	fs.Usage = func() { fmt.Fprint(stderr, c.usage); fs.PrintDefaults() }
	if err := parseFlags(fs, c.name, args); err != nil {
		return nil, "", "", nil, err
	}
	url, token, rest, err = ep.resolveArgs(fs, c.name, c.section, c.noToken)
	return fs, url, token, rest, err
}

// readAnswer reads the answer of a generated client's call: its status and
// body, or the call's error.
func readAnswer(resp *http.Response, err error) (int, []byte, error) {
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, body, nil
}

// bearer is a request editor of a generated client that sends token as the
// request's bearer credentials.
func bearer(token string) func(context.Context, *http.Request) error {
	return func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+token)
		return nil
	}
}
