package lifecycledoc_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/lifecycle"
	"github.com/apistack/apistack/internal/lifecycledoc"
)

const (
	xsdPath   = "../../specs/storage/lifecycle.xsd"
	corpusDir = "../../testdata/lifecycle"
)

// corpus returns the files of testdata/lifecycle/valid or invalid.
func corpus(t *testing.T, kind string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(corpusDir, kind, "*.xml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

// schemas are the XSDs xmllint checks the corpus with, by namespace: the spec's
// file for its target namespace, and for each other namespace the server
// accepts (lifecycledoc.Namespaces) a copy of it that differs only in its
// targetNamespace, none for "" (its tns: references then name no-namespace
// types). XML Schema 1.0 gives a schema one targetNamespace, so the language
// the server accepts is the union of these schemas, chosen by the root
// element's namespace, which is what the Go validator does (xsd.Options.Namespaces).
func schemas(t *testing.T) map[string]string {
	t.Helper()
	spec, err := os.ReadFile(xsdPath)
	require.NoError(t, err)
	target := `targetNamespace="` + lifecycledoc.Namespace + `"`
	tns := `xmlns:tns="` + lifecycledoc.Namespace + `"`
	require.Equal(t, 1, strings.Count(string(spec), target), "the XSD declares its targetNamespace once")
	require.Equal(t, 1, strings.Count(string(spec), tns), "the XSD binds tns once")
	out := map[string]string{lifecycledoc.Namespace: xsdPath}
	dir := t.TempDir()
	for i, ns := range lifecycledoc.Namespaces {
		var variant string
		if ns == "" {
			variant = strings.NewReplacer(target, "", tns, "", `"tns:`, `"`).Replace(string(spec))
		} else {
			variant = strings.NewReplacer(target, `targetNamespace="`+ns+`"`, tns, `xmlns:tns="`+ns+`"`).Replace(string(spec))
		}
		path := filepath.Join(dir, "lifecycle-"+string(rune('a'+i))+".xsd")
		require.NoError(t, os.WriteFile(path, []byte(variant), 0o600))
		out[ns] = path
	}
	return out
}

// schemaFor picks the XSD of the document's root namespace; a document whose
// root cannot be read, or is in a namespace not accepted, is checked against
// the spec's file (and is invalid either way).
func schemaFor(schemas map[string]string, body []byte) string {
	d := xml.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := d.Token()
		if err != nil {
			return xsdPath
		}
		if start, ok := tok.(xml.StartElement); ok {
			if path, ok := schemas[start.Name.Space]; ok {
				return path
			}
			return xsdPath
		}
	}
}

func TestSchemas_OneVariantPerAcceptedNamespace(t *testing.T) {
	got := schemas(t)
	want := append([]string{lifecycledoc.Namespace}, lifecycledoc.Namespaces...)
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	slices.Sort(want)
	assert.Equal(t, want, keys)
	noNamespace, err := os.ReadFile(got[""])
	require.NoError(t, err)
	assert.NotContains(t, string(noNamespace), `targetNamespace="`+lifecycledoc.Namespace)
	assert.NotContains(t, string(noNamespace), `"tns:`)
}

// xmllintValid runs `xmllint --noout --schema xsd file`: exit 0 is valid, 1 to 4
// (not well-formed, not valid) invalid; 5 (the schema itself does not compile)
// fails the test.
func xmllintValid(t *testing.T, xmllint, xsd, file string) bool {
	t.Helper()
	out, err := exec.Command(xmllint, "--noout", "--nonet", "--schema", xsd, file).CombinedOutput()
	if err == nil {
		return true
	}
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "running xmllint: %v", err)
	require.NotEqual(t, 5, exit.ExitCode(), "xmllint could not compile the schema:\n%s", out)
	return false
}

func TestParity_GoValidatorAndXmllintAgreeOnTheCorpus(t *testing.T) {
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Skip("xmllint is not installed (Debian package libxml2-utils); the parity check needs it as the reference validator")
	}
	valid, invalid := corpus(t, "valid"), corpus(t, "invalid")
	xsds := schemas(t)
	require.GreaterOrEqual(t, len(valid)+len(invalid), 30, "the corpus holds at least 30 documents")
	for _, tc := range []struct {
		files []string
		want  bool
	}{{valid, true}, {invalid, false}} {
		for _, file := range tc.files {
			t.Run(filepath.Base(filepath.Dir(file))+"/"+filepath.Base(file), func(t *testing.T) {
				body, err := os.ReadFile(file)
				require.NoError(t, err)
				goErr := lifecycledoc.Validate(body)
				assert.Equal(t, tc.want, xmllintValid(t, xmllint, schemaFor(xsds, body), file), "xmllint's verdict")
				assert.Equal(t, tc.want, goErr == nil, "the Go validator's verdict: %v", goErr)
			})
		}
	}
}

func TestEmbeddedSchema_IsTheSpecFile(t *testing.T) {
	spec, err := os.ReadFile(xsdPath)
	require.NoError(t, err)
	assert.Equal(t, string(spec), lifecycle.XSD, "gen/lifecycle is stale: run make generate")
}
