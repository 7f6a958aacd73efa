// Command generate runs every //go:generate line of the repository's
// generated packages in one process: the oapi-codegen lines through the
// oapi-codegen library (one compile, one process, instead of a `go run` per
// spec), any other line as written. `make generate` runs it.
//
//	go run ./tools/generate                # regenerate in place
//	go run ./tools/generate -check         # regenerate into a temporary directory and
//	                                       # compare with the files in the tree
//
// With -check nothing in the tree is written: it exits 1 naming each
// generated file that differs from what the specs and tables generate now
// (and each *.gen.go file under gen/ nothing generates), so it passes on
// freshly generated code that is not committed yet.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/oapi-codegen/oapi-codegen/v2/pkg/codegen"
	"github.com/oapi-codegen/oapi-codegen/v2/pkg/util"
	"go.yaml.in/yaml/v3"
)

// oapiCodegen is the package a go:generate line runs to generate from a spec.
const oapiCodegen = "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen"

// oapiModule is the module of oapiCodegen, named in each generated header.
const oapiModule = "github.com/oapi-codegen/oapi-codegen/v2"

func main() {
	root := flag.String("root", ".", "the repository root")
	check := flag.Bool("check", false, "generate into a temporary directory and compare with the tree; write nothing")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: generate [-check] [-root dir] [dir ...]\n"+
			"Runs the //go:generate lines of the .go files in each dir (default: gen/* and servers/restaurant).\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	dirs := flag.Args()
	if len(dirs) == 0 {
		var err error
		if dirs, err = defaultDirs(*root); err != nil {
			fail(err)
		}
	}
	if err := run(*root, dirs, *check, len(flag.Args()) == 0); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "generate:", err)
	os.Exit(1)
}

// errStale is the error of a -check that found differences (already listed).
var errStale = errors.New("generated code is stale: run `make generate` (and commit the result with the spec)")

// defaultDirs are the packages under gen/ and the directories of the
// generated files elsewhere (the Makefile's GENERATED_ELSEWHERE).
func defaultDirs(root string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, "gen"))
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != "internal" {
			dirs = append(dirs, filepath.Join("gen", e.Name()))
		}
	}
	return append(dirs, filepath.Join("servers", "restaurant")), nil
}

// step is one go:generate line.
type step struct {
	dir  string // relative to the root
	args []string
}

// run runs the go:generate lines of dirs; with check, into a temporary
// directory compared with the tree (and, with all, looking for generated
// files under gen/ that nothing generates).
func run(root string, dirs []string, check, all bool) error {
	var steps []step
	for _, d := range dirs {
		s, err := stepsIn(root, d)
		if err != nil {
			return err
		}
		steps = append(steps, s...)
	}
	if len(steps) == 0 {
		return fmt.Errorf("no //go:generate lines in %s", strings.Join(dirs, ", "))
	}
	out := root
	if check {
		tmp, err := os.MkdirTemp("", "apistack-generate-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		out = tmp
	}
	var written []string
	for _, s := range steps {
		files, err := s.run(root, out)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", s.dir, strings.Join(s.args, " "), err)
		}
		written = append(written, files...)
	}
	if !check {
		return nil
	}
	return compare(root, out, written, all)
}

// stepsIn reads the go:generate lines of the .go files in dir.
func stepsIn(root, dir string) ([]step, error) {
	files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var steps []step
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			line, ok := strings.CutPrefix(sc.Text(), "//go:generate ")
			if !ok {
				continue
			}
			steps = append(steps, step{dir: dir, args: strings.Fields(line)})
		}
	}
	return steps, nil
}

// run runs one step with its output under out (root itself, or a temporary
// directory mirroring it), and returns the files it wrote, relative to out.
func (s step) run(root, out string) ([]string, error) {
	if len(s.args) >= 3 && s.args[0] == "go" && s.args[1] == "run" && s.args[2] == oapiCodegen {
		f, err := oapi(filepath.Join(root, s.dir), filepath.Join(out, s.dir), s.args[3:])
		if err != nil {
			return nil, err
		}
		return []string{filepath.Join(s.dir, f)}, nil
	}
	return s.exec(root, out)
}

// exec runs a go:generate line that is not oapi-codegen as written, in its
// directory, with its output flag (-o or -out) pointed under out.
func (s step) exec(root, out string) ([]string, error) {
	args := append([]string(nil), s.args...)
	var files []string
	for i := 0; i < len(args); i++ {
		if (args[i] == "-o" || args[i] == "-out") && i+1 < len(args) {
			rel := filepath.Join(s.dir, args[i+1])
			target, err := filepath.Abs(filepath.Join(out, rel))
			if err != nil {
				return nil, err
			}
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return nil, err
			}
			args[i+1] = target
			files = append(files, rel)
			i++
		}
	}
	if len(files) == 0 {
		return nil, errors.New("names no output file (-o or -out): cannot tell what it generates")
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = filepath.Join(root, s.dir)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, err
	}
	return files, nil
}

// configuration is oapi-codegen's configuration file, as its command reads it.
type configuration struct {
	codegen.Configuration `yaml:",inline"`
	OutputFile            string `yaml:"output,omitempty"`
}

// oapi does what `oapi-codegen -config FILE SPEC` does in dir, writing the
// output file under outDir; it returns the output file's name.
func oapi(dir, outDir string, args []string) (string, error) {
	fs := flag.NewFlagSet("oapi-codegen", flag.ContinueOnError)
	configFile := fs.String("config", "", "")
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if *configFile == "" || fs.NArg() != 1 {
		return "", errors.New("only `-config FILE SPEC` is supported")
	}
	data, err := os.ReadFile(filepath.Join(dir, *configFile))
	if err != nil {
		return "", err
	}
	var cfg configuration
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		return "", fmt.Errorf("%s: %w", *configFile, err)
	}
	if cfg.OutputFile == "" || cfg.PackageName == "" {
		return "", fmt.Errorf("%s: name the package and the output file", *configFile)
	}
	cfg.Configuration = cfg.UpdateDefaults()
	if err := cfg.Validate(); err != nil {
		return "", fmt.Errorf("%s: %w", *configFile, err)
	}
	strict := true
	if cfg.OutputOptions.Overlay.Strict != nil {
		strict = *cfg.OutputOptions.Overlay.Strict
	}
	overlay := cfg.OutputOptions.Overlay.Path
	if overlay != "" {
		overlay = filepath.Join(dir, overlay)
	}
	spec, err := util.LoadSwaggerWithOverlay(filepath.Join(dir, fs.Arg(0)), util.LoadSwaggerWithOverlayOpts{
		Path: overlay, Strict: strict, AllowRemoteRefsFrom: cfg.AllowRemoteRefsFrom,
	})
	if err != nil {
		return "", fmt.Errorf("load %s: %w", fs.Arg(0), err)
	}
	version := oapiVersion()
	cfg.NoVCSVersionOverride = &version
	code, err := codegen.Generate(spec, cfg.Configuration)
	if err != nil {
		return "", err
	}
	// The header names the module of the running binary: this one, not
	// oapi-codegen's, whose command the go:generate line runs.
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Path != "" && bi.Main.Path != oapiModule {
		code = strings.Replace(code, "Code generated by "+bi.Main.Path+" version", "Code generated by "+oapiModule+" version", 1)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", err
	}
	return cfg.OutputFile, os.WriteFile(filepath.Join(outDir, cfg.OutputFile), []byte(code), 0o644)
}

// oapiVersion is the version of oapi-codegen linked in (go.mod's).
func oapiVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == oapiModule {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "unknown version"
}

// compare reports each file in written (generated under out) that differs
// from the tree's, and, with orphans, each *.gen.go under gen/ nothing
// generated.
func compare(root, out string, written []string, orphans bool) error {
	stale := false
	produced := map[string]bool{}
	for _, f := range written {
		produced[filepath.ToSlash(f)] = true
		want, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			return err
		}
		got, err := os.ReadFile(filepath.Join(root, f))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			fmt.Printf("missing: %s (the specs generate it)\n", f)
			stale = true
		case err != nil:
			return err
		case !bytes.Equal(got, want):
			fmt.Printf("stale:   %s (%s)\n", f, firstDifference(got, want))
			stale = true
		}
	}
	err := filepath.WalkDir(filepath.Join(root, "gen"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || !orphans || d.IsDir() || !strings.HasSuffix(path, ".gen.go") {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if !produced[filepath.ToSlash(rel)] {
			fmt.Printf("orphan:  %s (nothing generates it: delete it)\n", rel)
			stale = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	if stale {
		return errStale
	}
	fmt.Printf("generated code is up to date (%d files)\n", len(written))
	return nil
}

// firstDifference names the first line where the tree's file (got)
// differs from what is generated now (want).
func firstDifference(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) && i < len(w); i++ {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d: the tree has %q, the specs generate %q", i+1, clip(g[i]), clip(w[i]))
		}
	}
	return fmt.Sprintf("the tree has %d lines, the specs generate %d", len(g), len(w))
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
