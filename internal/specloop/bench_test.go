package specloop_test

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/apistack/apistack/internal/docblocks"
)

// BenchmarkMakeCover times `make cover API=pam` (PAM's server tests with the
// contract recording on, then its pair and field coverage) beside the same
// tests alone (`go test -count=1 ./servers/pam/...`, nothing recorded), in
// interleaved rounds (one per b.N) in the repository, and reports the
// median seconds of each and their ratio (the recording's and the coverage
// check's cost).
//
//	go test -run '^$' -bench MakeCover -benchtime 3x ./internal/specloop/
func BenchmarkMakeCover(b *testing.B) {
	root := docblocks.Root(b)
	run := func(args ...string) float64 {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "APISTACK_CONTRACT_COVERAGE_DIR=")
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %v: %s", args, err, out)
		}
		return time.Since(start).Seconds()
	}
	// Warm the build cache for both.
	run("go", "test", "-count=1", "-run", "^$", "./servers/pam/...", "./internal/contractcoverage/")
	var cover, plain []float64
	b.ResetTimer()
	for range b.N {
		cover = append(cover, run("make", "--no-print-directory", "cover", "API=pam"))
		plain = append(plain, run("go", "test", "-count=1", "./servers/pam/..."))
	}
	b.StopTimer()
	slices.Sort(cover)
	slices.Sort(plain)
	b.ReportMetric(cover[len(cover)/2], "make-cover-s")
	b.ReportMetric(plain[len(plain)/2], "tests-alone-s")
	b.ReportMetric(cover[len(cover)/2]/plain[len(plain)/2], "cover/tests")
}
