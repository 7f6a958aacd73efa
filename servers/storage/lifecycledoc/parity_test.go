package lifecycledoc_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/lifecycle"
	"github.com/apistack/apistack/servers/storage/lifecycledoc"
)

const (
	xsdPath   = "../../../specs/storage/lifecycle.xsd"
	corpusDir = "../../../testdata/lifecycle"
)

// corpus returns the files of testdata/lifecycle/valid or invalid.
func corpus(t *testing.T, kind string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(corpusDir, kind, "*.xml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

// xmllintValid runs `xmllint --noout --schema lifecycle.xsd file`: exit 0 is
// valid, 1 to 4 (not well-formed, not valid) invalid; 5 (the schema itself does
// not compile) fails the test.
func xmllintValid(t *testing.T, xmllint, file string) bool {
	t.Helper()
	out, err := exec.Command(xmllint, "--noout", "--nonet", "--schema", xsdPath, file).CombinedOutput()
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
				assert.Equal(t, tc.want, xmllintValid(t, xmllint, file), "xmllint's verdict")
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
