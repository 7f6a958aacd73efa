package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkGenerate times the two ways to regenerate every generated file,
// in interleaved rounds on a scratch checkout of HEAD (one round per b.N):
// before, `go generate` over the packages with go:generate lines (a `go
// run` per line, 16 in all); after, this program (`make generate`). Warm
// runs share the machine's build cache; cold runs each start from an empty
// GOCACHE (the module cache stays). It reports the median seconds of each
// and the ratios before/after.
//
//	go test -run '^$' -bench Generate -benchtime 3x ./tools/generate/
func BenchmarkGenerate(b *testing.B) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(b.TempDir(), "tree")
	if out, err := exec.Command("git", "-C", root, "worktree", "add", "--quiet", "--detach", dir, "HEAD").CombinedOutput(); err != nil {
		b.Fatalf("git worktree add: %v: %s", err, out)
	}
	b.Cleanup(func() { _ = exec.Command("git", "-C", root, "worktree", "remove", "--force", dir).Run() })

	ways := map[string][]string{
		"before": {"go", "generate", "./gen/...", "./servers/restaurant/"},
		"after":  {"go", "run", "./tools/generate"},
	}
	run := func(way string, cold bool) time.Duration {
		args := ways[way]
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		cmd.Env = os.Environ()
		if cold {
			cache, err := os.MkdirTemp("", "gocache-")
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				_ = exec.Command("chmod", "-R", "u+w", cache).Run()
				_ = os.RemoveAll(cache)
			}()
			cmd.Env = append(cmd.Env, "GOCACHE="+cache)
		}
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v: %s", way, err, out)
		}
		return time.Since(start)
	}
	// One warm-up of each, so "warm" means warm for both.
	run("before", false)
	run("after", false)
	times := map[string][]float64{}
	b.ResetTimer()
	for range b.N {
		for _, cold := range []bool{false, true} {
			for _, way := range []string{"before", "after"} {
				key := way + "-warm"
				if cold {
					key = way + "-cold"
				}
				times[key] = append(times[key], run(way, cold).Seconds())
			}
		}
	}
	b.StopTimer()
	med := map[string]float64{}
	for k, v := range times {
		slices.Sort(v)
		med[k] = v[len(v)/2]
		b.ReportMetric(med[k], k+"-s")
	}
	b.ReportMetric(med["before-warm"]/med["after-warm"], "warm-before/after")
	b.ReportMetric(med["before-cold"]/med["after-cold"], "cold-before/after")
}
