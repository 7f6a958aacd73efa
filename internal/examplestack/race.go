//go:build race

package examplestack

// raceEnabled: the test runs with -race, so the server is built with it too
// and reuses the packages the build cache holds.
const raceEnabled = true
