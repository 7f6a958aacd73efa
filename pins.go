//go:build tools

package tools

// A module that imports apistacktest and runs `go mod tidy` loads the tests
// of every package it depends on. One of them (kr/pretty, through the test
// dependencies of the servers' libraries) imports go-internal's fmtsort,
// which no requirement of this module names: tidy would then look the
// module up on the network, and offline it fails. Requiring it here puts
// it in every consumer's module graph at the version this repository
// already selects.
import _ "github.com/rogpeppe/go-internal/fmtsort"
