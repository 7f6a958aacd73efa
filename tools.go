//go:build tools

// Package tools pins the versions of the command-line tools the build runs
// (code generation and static analysis) in go.mod, so `go run` uses exactly
// the version the repository was generated and linted with.
package tools

import (
	_ "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen"
	_ "honnef.co/go/tools/cmd/staticcheck"
)
