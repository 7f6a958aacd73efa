package fixturefile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/internal/fixturefile"
)

func TestRead_JSONAndYAMLGiveTheSameDocument(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"f.json": `{"pam": {"groups": [{"name": "fx-group", "roles": ["end_user"]}]}}`,
		"f.yaml": "pam:\n  groups:\n    - name: fx-group\n      roles: [end_user]\n",
	}
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600))
	}
	j, err := fixturefile.Read(filepath.Join(dir, "f.json"))
	require.NoError(t, err)
	y, err := fixturefile.Read(filepath.Join(dir, "f.yaml"))
	require.NoError(t, err)
	assert.JSONEq(t, string(j), string(y))
}

func TestParse_RefusesWhatIsNoFixture(t *testing.T) {
	for name, text := range map[string]string{
		"a list":         "- pam\n- fax\n",
		"a scalar":       "pam",
		"broken YAML":    "pam: [groups\n",
		"broken JSON":    `{"pam": {"groups": [}`,
		"non-string key": "1: x\n? [a, b]\n: y\n",
	} {
		_, err := fixturefile.Parse([]byte(text))
		assert.Error(t, err, name)
	}
	_, err := fixturefile.Read(filepath.Join(t.TempDir(), "missing.yaml"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
