//go:build !race

package examplestack

// raceEnabled: the test runs without -race.
const raceEnabled = false
