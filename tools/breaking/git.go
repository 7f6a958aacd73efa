package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// specPatterns are the specs compared, relative to the repository root.
var specPatterns = []string{"specs/*/openapi.yaml", "specs/*/webhooks.yaml"}

// Repo is a git work tree.
type Repo struct {
	// Root is the work tree's top directory.
	Root string
}

func (r Repo) git(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", r.Root}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// Commit resolves rev to a commit id.
func (r Repo) Commit(ctx context.Context, rev string) (string, error) {
	out, err := r.git(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("%q is not a commit of %s: %w", rev, r.Root, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Shallow reports whether the clone's history is cut short.
func (r Repo) Shallow(ctx context.Context) (bool, error) {
	out, err := r.git(ctx, "rev-parse", "--is-shallow-repository")
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(string(out)) == "true", nil
}

func matchesSpec(p string) bool {
	for _, pat := range specPatterns {
		if ok, _ := path.Match(pat, p); ok {
			return true
		}
	}
	return false
}

// SpecsAt lists the specs present at commit.
func (r Repo) SpecsAt(ctx context.Context, commit string) ([]string, error) {
	out, err := r.git(ctx, "ls-tree", "-r", "--name-only", commit, "--", "specs")
	if err != nil {
		return nil, err
	}
	var specs []string
	for _, p := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if matchesSpec(p) {
			specs = append(specs, p)
		}
	}
	return specs, nil
}

// SpecsInWorkTree lists the specs present in the work tree.
func (r Repo) SpecsInWorkTree() ([]string, error) {
	var specs []string
	for _, pat := range specPatterns {
		found, err := filepath.Glob(filepath.Join(r.Root, filepath.FromSlash(pat)))
		if err != nil {
			return nil, fmt.Errorf("glob %s: %w", pat, err)
		}
		for _, f := range found {
			rel, err := filepath.Rel(r.Root, f)
			if err != nil {
				return nil, fmt.Errorf("spec %s: %w", f, err)
			}
			specs = append(specs, filepath.ToSlash(rel))
		}
	}
	slices.Sort(specs)
	return specs, nil
}

// Show reads a file at commit.
func (r Repo) Show(ctx context.Context, commit, p string) ([]byte, error) {
	return r.git(ctx, "show", commit+":"+p)
}

// ReadWorkTree reads a file of the work tree.
func (r Repo) ReadWorkTree(p string) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(r.Root, filepath.FromSlash(p)))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	return data, nil
}

// History lists the commits that changed p along the first-parent line of
// HEAD (main's own history: a merge counts once), oldest first.
func (r Repo) History(ctx context.Context, p string) ([]string, error) {
	out, err := r.git(ctx, "log", "--first-parent", "--reverse", "--format=%H", "HEAD", "--", p)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}
