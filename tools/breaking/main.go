// Command breaking guards the specs' consumers: `breaking check --base REV`
// compares every spec (specs/*/openapi.yaml, specs/*/webhooks.yaml) at REV
// with the work tree and fails on a change that breaks consumers unless the
// spec's info.version has a new major version; `breaking changelog` writes
// specs/<api>/CHANGELOG.md from each spec's history, one entry per
// info.version. The comparison is oasdiff's (github.com/oasdiff/oasdiff),
// and, since oasdiff ignores extensions, the operations' x-apistack-roles
// (roles.go): a role taken out of an operation's list is a break.
//
// Run it from the repository root through make: `make breaking BASE=REV`,
// `make changelog`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// errBreaking is returned when a spec changed incompatibly.
var errBreaking = errors.New("breaking changes without a new major version")

// errVersionNotBumped is returned under CI=true when a spec's interface
// changed and its info.version did not move up.
var errVersionNotBumped = errors.New("the interface changed without a new info.version")

// errUsage marks a command-line mistake (exit status 2).
var errUsage = errors.New("usage")

const usage = `usage: breaking check --base REV [--root DIR]
       breaking changelog [--root DIR] [--check]`

func main() {
	err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, errBreaking), errors.Is(err, errVersionNotBumped):
		fmt.Fprintln(os.Stderr, "breaking:", err)
		os.Exit(1)
	case errors.Is(err, errStaleChangelog):
		fmt.Fprintln(os.Stderr, "breaking:", err)
		os.Exit(1)
	default:
		fmt.Fprintln(os.Stderr, "breaking:", err)
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return fmt.Errorf("%w: no command given", errUsage)
	}
	fs := flag.NewFlagSet("breaking "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", ".", "the repository's work tree")
	switch args[0] {
	case "check":
		base := fs.String("base", "", "the git revision to compare with (required)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *base == "" || fs.NArg() > 0 {
			fmt.Fprintln(stderr, usage)
			return fmt.Errorf("%w: check needs --base REV and no other argument", errUsage)
		}
		return check(ctx, Repo{Root: *root}, *base, os.Getenv("CI") == "true", stdout)
	case "changelog":
		checkOnly := fs.Bool("check", false, "fail when a committed changelog differs from what the history gives, write nothing")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() > 0 {
			fmt.Fprintln(stderr, usage)
			return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
		}
		return changelog(ctx, Repo{Root: *root}, *checkOnly, stdout)
	default:
		fmt.Fprintln(stderr, usage)
		return fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
}

// check compares every spec at base with the work tree and prints each
// spec's verdict and its changes. A spec whose interface changed while its
// info.version stayed is a warning, and with strict (CI=true) a failure.
func check(ctx context.Context, repo Repo, base string, strict bool, out io.Writer) error {
	commit, err := repo.Commit(ctx, base)
	if err != nil {
		return err
	}
	atBase, err := repo.SpecsAt(ctx, commit)
	if err != nil {
		return err
	}
	now, err := repo.SpecsInWorkTree()
	if err != nil {
		return err
	}
	paths := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(atBase), now...))))
	var failed, unbumped []string
	for _, p := range paths {
		var b, r *Spec
		if slices.Contains(atBase, p) {
			data, err := repo.Show(ctx, commit, p)
			if err != nil {
				return err
			}
			if b, err = LoadSpec(p, data); err != nil {
				return fmt.Errorf("at %s: %w", base, err)
			}
		}
		if slices.Contains(now, p) {
			data, err := repo.ReadWorkTree(p)
			if err != nil {
				return err
			}
			if r, err = LoadSpec(p, data); err != nil {
				return err
			}
		}
		v, err := Judge(p, b, r)
		if err != nil {
			return err
		}
		printVerdict(out, v)
		switch {
		case v.Failed:
			failed = append(failed, p)
		case v.Bump != "":
			unbumped = append(unbumped, fmt.Sprintf("%s: write %s", p, v.Bump))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%w in %v: restore what consumers rely on, or give the spec a new major info.version", errBreaking, failed)
	}
	if len(unbumped) > 0 {
		if strict {
			return fmt.Errorf("%w (%s): set info.version, then run make changelog", errVersionNotBumped, strings.Join(unbumped, "; "))
		}
		fmt.Fprintf(out, "warning: %s (%s): set info.version, then run make changelog (CI=true fails on this)\n",
			errVersionNotBumped, strings.Join(unbumped, "; "))
	}
	return nil
}

func printVerdict(out io.Writer, v Verdict) {
	versions := v.BaseVersion + " -> " + v.Version
	switch {
	case v.BaseVersion == "":
		versions = "new at " + v.Version
	case v.Version == "":
		versions = "removed (was " + v.BaseVersion + ")"
	}
	breaking := 0
	for _, c := range v.Changes {
		if c.Breaking() {
			breaking++
		}
	}
	status := "ok"
	switch {
	case v.Failed:
		status = "FAIL"
	case breaking > 0:
		status = "ok (new major version)"
	case v.Bump != "":
		status = "VERSION NOT BUMPED"
	}
	fmt.Fprintf(out, "%s (%s): %s, %d breaking, %d warnings\n", v.Path, versions, status, breaking, len(v.Changes)-breaking)
	for _, c := range v.Changes {
		fmt.Fprintf(out, "  %s\n", c)
	}
	if v.Failed {
		fmt.Fprintf(out, "  %s breaks its consumers without a new major info.version (%s): write %s\n", v.Path, versions, v.Bump)
	} else if v.Bump != "" {
		fmt.Fprintf(out, "  %s changed its interface (%d changes, additions only) but info.version is still %s: write %s\n",
			v.Path, v.Changed, v.BaseVersion, v.Bump)
	}
}
