//go:build race

package heaptest

// RaceEnabled reports whether the tests run with the race detector, which
// makes a large workload take ten times as long: the tests that measure the
// heap over tens of MiB of documents skip under it, and `make test` runs
// them once more without it.
const RaceEnabled = true
