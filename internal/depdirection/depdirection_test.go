package depdirection_test

import (
	"bytes"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/internal/depdirection"
	"github.com/apistack/apistack/internal/docblocks"
)

// The module's real graph, tests included: go list prints every package
// with the imports of each build (a package built for a test carries the
// test's name), and every forbidden path is listed with its edges. No
// server package is let off: the servers' tests reach their servers
// through the generated clients (servers/internal/tenantapi), and what
// proves a client's behaviour lives with the clients or under e2e/.
func TestModule_DependenciesFlowOneWay(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	cmd := exec.Command("go", "list", "-deps", "-test", "-json=ImportPath,ForTest,Imports", "./...")
	cmd.Dir = docblocks.Root(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", stderr.String())
	pkgs, err := depdirection.Decode(bytes.NewReader(out))
	require.NoError(t, err)
	require.Greater(t, len(pkgs), 100, "go list printed the module's packages")

	for _, v := range depdirection.Check(pkgs, nil) {
		t.Errorf("%v", v)
	}
}

const m = depdirection.Module

func TestCheck_NamesTheEdgeThatCrosses(t *testing.T) {
	tests := []struct {
		name    string
		pkgs    []depdirection.Package
		allowed []string
		want    []string
	}{
		{
			name: "a server imports a client",
			pkgs: []depdirection.Package{
				{ImportPath: m + "/servers/storage", Imports: []string{"net/http", m + "/clients/storage/sigv4"}},
				{ImportPath: m + "/clients/storage/sigv4"},
			},
			want: []string{m + "/servers/storage -> " + m + "/clients/storage/sigv4: a server package depends on a client package"},
		},
		{
			name: "a client reaches a server through a neutral package",
			pkgs: []depdirection.Package{
				{ImportPath: m + "/clients/contract", Imports: []string{m + "/internal/xmlbody"}},
				{ImportPath: m + "/internal/xmlbody", Imports: []string{m + "/servers/storage/lifecycledoc"}},
				{ImportPath: m + "/servers/storage/lifecycledoc"},
			},
			want: []string{m + "/clients/contract -> " + m + "/internal/xmlbody -> " + m + "/servers/storage/lifecycledoc: a client package (tests included) depends on a server package"},
		},
		{
			name: "a client's test imports a server",
			pkgs: []depdirection.Package{
				{ImportPath: m + "/clients/pam_test [" + m + "/clients/pam.test]", ForTest: m + "/clients/pam", Imports: []string{m + "/servers/pam/pamtest"}},
				{ImportPath: m + "/servers/pam/pamtest"},
			},
			want: []string{m + "/clients/pam_test -> " + m + "/servers/pam/pamtest: a client package (tests included) depends on a server package"},
		},
		{
			name: "a server's test imports a client, allowed for that package only",
			pkgs: []depdirection.Package{
				{ImportPath: m + "/servers/sandbox_test [" + m + "/servers/sandbox.test]", ForTest: m + "/servers/sandbox", Imports: []string{m + "/clients/pam"}},
				{ImportPath: m + "/servers/fax [" + m + "/servers/fax.test]", ForTest: m + "/servers/fax", Imports: []string{m + "/clients/fax"}},
				{ImportPath: m + "/clients/pam"},
				{ImportPath: m + "/clients/fax"},
			},
			allowed: []string{m + "/servers/sandbox"},
			want:    []string{m + "/servers/fax -> " + m + "/clients/fax: a server package's tests depend on a client package"},
		},
		{
			name: "a protocol package imports a side",
			pkgs: []depdirection.Package{
				{ImportPath: m + "/protocol/contract_test [" + m + "/protocol/contract.test]", ForTest: m + "/protocol/contract", Imports: []string{m + "/clients/fax"}},
				{ImportPath: m + "/clients/fax"},
			},
			want: []string{m + "/protocol/contract_test -> " + m + "/clients/fax: a protocol package depends on a client or server package"},
		},
		{
			name: "the binary and the neutral packages may import both sides' shared code",
			pkgs: []depdirection.Package{
				{ImportPath: m + "/servers/cmd/apistack", Imports: []string{m + "/clients/fax", m + "/servers/fax"}},
				{ImportPath: m + "/servers/storage", Imports: []string{m + "/protocol/sigv4"}},
				{ImportPath: m + "/clients/storage", Imports: []string{m + "/protocol/sigv4", m + "/internal/replay"}},
				{ImportPath: m + "/protocol/sigv4", Imports: []string{"crypto/hmac"}},
				{ImportPath: m + "/clients/fax"}, {ImportPath: m + "/servers/fax"}, {ImportPath: m + "/internal/replay"},
				{ImportPath: m + "/servers/fax.test", Imports: []string{m + "/clients/fax"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, v := range depdirection.Check(tt.pkgs, tt.allowed) {
				got = append(got, v.String())
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestDecode_ReadsGoListStream(t *testing.T) {
	pkgs, err := depdirection.Decode(bytes.NewReader([]byte(`{"ImportPath":"a","Imports":["b"]}
{"ImportPath":"a [a.test]","ForTest":"a"}`)))
	require.NoError(t, err)
	assert.Equal(t, []depdirection.Package{{ImportPath: "a", Imports: []string{"b"}}, {ImportPath: "a [a.test]", ForTest: "a"}}, pkgs)

	_, err = depdirection.Decode(bytes.NewReader([]byte(`{"ImportPath":`)))
	assert.Error(t, err)
}
