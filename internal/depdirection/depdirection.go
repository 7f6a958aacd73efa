// Package depdirection checks that this module's dependencies flow one way:
// specs -> gen -> clients | servers. A service that imports a client must
// compile no server code (and `go mod tidy` in its module loads the tests of
// what it imports, so the clients' tests must not reach the servers either),
// and the servers must not depend on the ergonomic clients, whose API is
// shaped for users and changes for them. What both sides need (SigV4,
// the fax webhook signature, XML bodies, contract validation) lives in
// neutral packages, under protocol/ or internal/, that import neither side.
//
// Check reads the package graph `go list -deps -test -json` prints and names
// every path that breaks the rules, edge by edge.
package depdirection

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Module is the path of this module.
const Module = "github.com/apistack/apistack"

// Package is what Check reads of one entry of `go list -deps -test -json`.
type Package struct {
	// ImportPath is the package's path; a package built for a test carries
	// the test's name in brackets ("x [x.test]"), and an external test
	// package is "x_test [x.test]".
	ImportPath string
	// ForTest is the package whose test this build is for ("" otherwise).
	ForTest string
	// Imports are the direct imports, as the same kind of path.
	Imports []string
}

// Violation is one path in the graph from a package to one it must not
// depend on.
type Violation struct {
	// Path runs from the offending package to the forbidden one, each an
	// import path without the test's bracket; its last step is the edge
	// that crosses.
	Path []string
	// Rule says which rule the path breaks.
	Rule string
}

// String names the path, arrow by arrow, and the rule.
func (v Violation) String() string {
	return strings.Join(v.Path, " -> ") + ": " + v.Rule
}

// Decode reads the JSON stream `go list -json` prints.
func Decode(r io.Reader) ([]Package, error) {
	var pkgs []Package
	dec := json.NewDecoder(r)
	for {
		var p Package
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			return pkgs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("depdirection: decode go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
}

// side is the part of the module a package belongs to.
type side int

const (
	other side = iota
	clientSide
	serverSide
	// command is servers/cmd: the binary assembles both sides.
	command
	neutral
)

// bare strips the test's bracket from an import path.
func bare(path string) string {
	p, _, _ := strings.Cut(path, " ")
	return p
}

func under(path, dir string) bool {
	return path == Module+"/"+dir || strings.HasPrefix(path, Module+"/"+dir+"/")
}

func sideOf(path string) side {
	path = strings.TrimSuffix(bare(path), "_test")
	switch {
	case under(path, "servers/cmd"):
		return command
	case under(path, "servers"):
		return serverSide
	case under(path, "clients"):
		return clientSide
	case under(path, "protocol"):
		return neutral
	}
	return other
}

// Check returns every package whose dependencies reach across, with the
// path they take:
//   - nothing under clients/, its tests included, depends on servers/;
//   - nothing under servers/ but servers/cmd depends on clients/, save the
//     tests of the packages in serverTestsMayImportClients;
//   - nothing under protocol/, its tests included, depends on either side.
//
// Dependencies are followed through every package in between, so a client
// reaching a server through a package of internal/ is caught too.
// serverTestsMayImportClients lists packages (as import paths) whose tests
// drive their server through the ergonomic clients on purpose.
func Check(pkgs []Package, serverTestsMayImportClients []string) []Violation {
	imports := make(map[string][]string, len(pkgs))
	for _, p := range pkgs {
		imports[p.ImportPath] = p.Imports
	}
	var out []Violation
	for _, p := range pkgs {
		if strings.HasSuffix(p.ImportPath, ".test") {
			continue // the generated test main: it imports the package and its tests only
		}
		from := bare(p.ImportPath)
		if !strings.HasPrefix(from, Module+"/") {
			continue
		}
		test := p.ForTest != ""
		var forbidden func(side) bool
		var rule string
		switch sideOf(from) {
		case clientSide:
			forbidden = func(s side) bool { return s == serverSide || s == command }
			rule = "a client package (tests included) depends on a server package"
		case serverSide:
			if test && slices.Contains(serverTestsMayImportClients, p.ForTest) {
				continue
			}
			forbidden = func(s side) bool { return s == clientSide }
			rule = "a server package depends on a client package"
			if test {
				rule = "a server package's tests depend on a client package"
			}
		case neutral:
			if path := pathTo(imports, p.ImportPath, func(s side) bool { return s == clientSide || s == serverSide || s == command }); path != nil {
				out = append(out, Violation{Path: path, Rule: "a protocol package depends on a client or server package"})
			}
			continue
		default:
			continue
		}
		if path := pathTo(imports, p.ImportPath, forbidden); path != nil {
			out = append(out, Violation{Path: path, Rule: rule})
		}
	}
	return out
}

// pathTo finds, breadth first, the shortest import path from start to a
// package of a side bad says is forbidden, through packages of this module
// (the others cannot import it back). Nil when there is none.
func pathTo(imports map[string][]string, start string, bad func(side) bool) []string {
	prev := map[string]string{start: ""}
	queue := []string{start}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, next := range imports[cur] {
			if _, seen := prev[next]; seen || !strings.HasPrefix(next, Module+"/") {
				continue
			}
			prev[next] = cur
			if bad(sideOf(next)) {
				var path []string
				for n := next; n != ""; n = prev[n] {
					path = append(path, bare(n))
				}
				slices.Reverse(path)
				return path
			}
			queue = append(queue, next)
		}
	}
	return nil
}
