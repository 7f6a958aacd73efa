// Command benchhttp runs the HTTP benchmark harness (`make bench-http`) and
// writes BENCHMARKS.md. Run it from the module's root:
//
//	go run ./bench/cmd/benchhttp -duration 2s -rounds 1 -scenarios pam-list,restaurant-list
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/apistack/apistack/bench/benchhttp"
)

// defaultPrism is where `make .tools/node_modules/.bin/prism` installs Prism.
const defaultPrism = ".tools/node_modules/.bin/prism"

func main() {
	benchhttp.RunCeilingIfChild()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchhttp:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("benchhttp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	duration := fs.Duration("duration", 5*time.Second, "measured length of each run")
	warmup := fs.Duration("warmup", time.Second, "unmeasured load before each run")
	rounds := fs.Int("rounds", 3, "interleaved rounds per scenario")
	scenarios := fs.String("scenarios", "all", "comma-separated scenarios to run")
	connections := fs.Int("connections", 0, "connections of every scenario (0: each scenario's own)")
	prism := fs.String("prism", defaultPrism, "the Prism CLI; \"\" runs without Prism")
	out := fs.String("out", "BENCHMARKS.md", "the report to write")
	jsonOut := fs.String("json", "", "also write the measurements as JSON to this file")
	root := fs.String("root", ".", "the module's root directory: the source built, measured and recorded in the report")
	binary := fs.String("binary", "", "a built apistack binary (default: build ./servers/cmd/apistack)")
	cpuProfile := fs.String("cpuprofile", "", "directory where each apistack process writes a CPU profile of the run (serve --cpu-profile)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	selected, err := benchhttp.SelectScenarios(*scenarios)
	if err != nil {
		return err
	}
	prismPath := *prism
	if prismPath != "" {
		if !filepath.IsAbs(prismPath) {
			prismPath = filepath.Join(*root, prismPath)
		}
		if _, err := os.Stat(prismPath); err != nil {
			if *prism != defaultPrism {
				return fmt.Errorf("-prism: %w", err)
			}
			fmt.Fprintf(stderr, "benchhttp: %s is not installed (make %s); measuring without Prism\n", defaultPrism, defaultPrism)
			prismPath = ""
		}
	}
	profileDir := ""
	if *cpuProfile != "" {
		if profileDir, err = filepath.Abs(*cpuProfile); err != nil {
			return err
		}
		if err := os.MkdirAll(profileDir, 0o755); err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
	}
	report, err := benchhttp.Run(ctx, benchhttp.Config{
		Root: *root, Scenarios: selected, Duration: *duration, Warmup: *warmup, Rounds: *rounds,
		Connections: *connections, Prism: prismPath, Binary: *binary, Log: stderr, CPUProfileDir: profileDir,
	})
	if err != nil {
		return err
	}
	if profileDir != "" {
		for _, server := range []string{benchhttp.ServerAPIStack, benchhttp.ServerValidate} {
			if p := benchhttp.CPUProfilePath(profileDir, server); fileExists(p) {
				fmt.Fprintf(stderr, "benchhttp: CPU profile of %s: %s (go tool pprof -top %s)\n", server, p, p)
			}
		}
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	if err := report.WriteMarkdown(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", *out, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "benchhttp: wrote %s\n", *out)
	if *jsonOut != "" {
		data, err := json.MarshalIndent(report, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
