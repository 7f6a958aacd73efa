//go:build !race

package heaptest

// RaceEnabled reports whether the tests run with the race detector (see
// race.go).
const RaceEnabled = false
