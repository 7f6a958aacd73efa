package docblocks_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/internal/docblocks"
)

// snippet is a named Go block of a guide: statements a reader pastes into a
// function of their own, whose variables the guide's text names.
type snippet struct {
	file, name string
	// params declares what the statements use without defining it.
	params string
	// imports are the packages the statements use, besides those its own
	// import lines name.
	imports []string
}

var snippets = []snippet{
	{"docs/apis.md", "fax-webhook-go", "b64 string", []string{"context", "net/http", "github.com/apistack/apistack/clients/fax"}},
	{"docs/apis.md", "storage-go", "endpoint, region, id, secret string",
		[]string{"fmt", "github.com/apistack/apistack/clients/storage"}},
	{"docs/apis.md", "s3compat-go", "endpoint, region, id, secret string", []string{
		"errors", "fmt", "github.com/aws/aws-sdk-go-v2/aws", "github.com/aws/aws-sdk-go-v2/service/s3",
		"github.com/aws/aws-sdk-go-v2/service/s3/types", "github.com/aws/smithy-go",
	}},
	{"docs/apis.md", "restaurant-go", "url, id, secret, guid, menuGUID string, since time.Time",
		[]string{"fmt", "time", "github.com/apistack/apistack/clients/restaurant"}},
	{"docs/clients.md", "contract-go", "baseURL, team, keyID, keySecret string", []string{
		"net/http", "github.com/apistack/apistack/clients/contract", "github.com/apistack/apistack/clients/pam",
	}},
}

// Every named Go block of the guides compiles as the body of a function
// taking what the guide's text names: a reader pasting it gets code that
// builds against today's clients, not a sketch of an older API.
func TestGuides_GoSnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the snippets")
	}
	dir := t.TempDir()
	var files []string
	listed := map[string]bool{}
	for i, s := range snippets {
		listed[s.file+" "+s.name] = true
		body := docblocks.Code(t, s.file, s.name, "go")
		imports := append([]string{"context"}, s.imports...)
		var stmts []string
		for _, line := range strings.Split(body, "\n") {
			if path, ok := strings.CutPrefix(line, "import "); ok {
				imports = append(imports, strings.Trim(path, `"`))
				continue
			}
			stmts = append(stmts, line)
		}
		var src strings.Builder
		src.WriteString("package main\n\nimport (\n")
		seen := map[string]bool{}
		for _, p := range imports {
			if !seen[p] {
				seen[p] = true
				src.WriteString("\t\"" + p + "\"\n")
			}
		}
		src.WriteString(")\n\n// " + s.file + ", " + s.name + "\nfunc snippet" + string(rune('A'+i)) + "(ctx context.Context, " + s.params + ") error {\n")
		src.WriteString(strings.Join(stmts, "\n") + "\n\treturn nil\n}\n")
		path := filepath.Join(dir, s.name+".go")
		require.NoError(t, os.WriteFile(path, []byte(src.String()), 0o644))
		files = append(files, path)
	}
	main := filepath.Join(dir, "main.go")
	require.NoError(t, os.WriteFile(main, []byte("package main\n\nfunc main() {}\n"), 0o644))
	// Each file imports "context" for its function; one that uses nothing
	// else of an import fails the build, so the lists above stay exact.
	cmd := exec.Command("go", append([]string{"build", "-o", filepath.Join(dir, "snippets")}, append(files, main)...)...)
	cmd.Dir = docblocks.Root(t)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the guides' Go blocks do not compile:\n%s", out)

	// Every named Go block is one of the above.
	for _, file := range guides(t) {
		data, err := os.ReadFile(filepath.Join(docblocks.Root(t), file))
		require.NoError(t, err)
		lines := strings.Split(string(data), "\n")
		for i, line := range lines {
			if line != "```go" || i == 0 || !strings.HasPrefix(lines[i-1], "<!-- ") {
				continue
			}
			name := strings.TrimSuffix(strings.TrimPrefix(lines[i-1], "<!-- "), " -->")
			assert.True(t, listed[file+" "+name], "%s: the Go block %s is compiled by no entry of snippets", file, name)
		}
	}
}
