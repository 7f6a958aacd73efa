package storage_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/internal/docblocks"
	"github.com/apistack/apistack/servers/storage"
	"github.com/apistack/apistack/servers/storage/storagetest"
)

// sdkLifecycleOutput is what each example's lifecycle program prints: the
// two rules it put, read back, then the answer to reading them once
// deleted.
var sdkLifecycleOutput = []string{
	`rule expire-logs Enabled prefix="logs/" expire-after=30d`,
	`rule abort-uploads Enabled prefix="" abort-uploads-after=7d`,
	`deleted: NoSuchLifecycleConfiguration`,
}

// sdkEnv keeps an SDK from finding the AWS settings of the machine it runs
// on, and Python from writing bytecode into the examples.
var sdkEnv = []string{"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "PYTHONDONTWRITEBYTECODE=1"}

// exampleSDK is one of the real SDKs the examples drive, changed in nothing
// but their signer.
type exampleSDK struct {
	name string
	// example is the folder under examples/, program the lifecycle program
	// in it, block the guide's (docs/storage-sdks.md) block that runs it.
	example, program, block string
	// needs says what to install when find fails.
	needs string
	// find returns the interpreter that runs the example, or why it cannot
	// (root is the repository's root).
	find func(root string) (string, error)
}

// exampleSDKs: the JavaScript SDK v3 (@aws-sdk/client-s3, pinned in
// examples/s3-js/package.json, signer examples/s3-js/cloud4-signer.mjs),
// which sends the path-style form PUT /{bucket}/?lifecycle=; and boto3
// (signer examples/s3-python/cloud4_signer.py), whose botocore sends no
// Content-Type on PutBucketLifecycleConfiguration, which the server reads as
// XML, as S3 does.
var exampleSDKs = []exampleSDK{
	{
		name: "javascript", example: "s3-js", program: "lifecycle.mjs", block: "storage-sdk-js",
		needs: "node and examples/s3-js/node_modules (npm ci in examples/s3-js)",
		find:  nodeWithS3Client,
	},
	{
		name: "python", example: "s3-python", program: "lifecycle.py", block: "storage-sdk-python",
		needs: "python3 with boto3 (apt-get install python3-boto3)",
		find:  func(string) (string, error) { return pythonWithBoto3() },
	},
}

// requireSDK returns the interpreter of sdk; without it the test skips, and
// fails under CI (`.ci/run` installs both: npm ci in examples/s3-js, and
// Debian's python3-boto3 where no python3 has boto3).
func requireSDK(t *testing.T, root string, sdk exampleSDK) string {
	t.Helper()
	bin, err := sdk.find(root)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s missing under CI: %v", sdk.needs, err)
		}
		t.Skipf("%s missing: %v", sdk.needs, err)
	}
	return bin
}

// runSDK runs cmd and returns its standard output; a failure fails the test
// with both outputs (standard error has the SDK's own warnings, such as its
// Node support notice).
func runSDK(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s\n%s", out, stderr.String())
	return string(out)
}

// The lifecycle calls through each real SDK, changed in nothing but its
// signer.
func TestSDKs_LifecycleWithOnlyTheSignerSwapped(t *testing.T) {
	root := docblocks.Root(t)
	for _, sdk := range exampleSDKs {
		t.Run(sdk.name, func(t *testing.T) {
			bin := requireSDK(t, root, sdk)
			env := storagetest.Start(t, storagetest.Options{})
			cmd := exec.CommandContext(t.Context(), bin, sdk.program)
			cmd.Dir = filepath.Join(root, "examples", sdk.example)
			cmd.Env = append(append(os.Environ(),
				"APISTACK_S3_ENDPOINT="+env.URL,
				"APISTACK_S3_REGION="+storage.DefaultRegion,
				"APISTACK_S3_KEY_ID="+env.Key.KeyID,
				"APISTACK_S3_SECRET="+env.Key.Secret,
				"APISTACK_S3_BUCKET="+storagetest.Bucket,
			), sdkEnv...)
			lines := strings.Split(strings.TrimSpace(runSDK(t, cmd)), "\n")
			assert.Equal(t, sdkLifecycleOutput, lines)
		})
	}
}

// The guide's SDK blocks run as written against a started server, from a
// directory laid out as the repository root with a running stack's
// data/demo-credentials.json.
func TestGuide_StorageSDKsRun(t *testing.T) {
	root := docblocks.Root(t)
	env := storagetest.Start(t, storagetest.Options{})
	dir := t.TempDir()
	require.NoError(t, os.Symlink(filepath.Join(root, "examples"), filepath.Join(dir, "examples")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "data"), 0o700))
	creds, err := json.Marshal(map[string]map[string]string{"storage": {
		"endpoint": env.URL, "region": storage.DefaultRegion, "key_id": env.Key.KeyID,
		"secret": env.Key.Secret, "bucket": storagetest.Bucket,
	}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "data", "demo-credentials.json"), creds, 0o600))
	assert.Contains(t, docblocks.Block(t, "docs/storage-sdks.md", "storage-sdk-env"), "jq")

	// Each block is named literally: that is how the guides' lint
	// (internal/docblocks) finds the blocks a test runs.
	texts := map[string]string{
		"storage-sdk-python": docblocks.Block(t, "docs/storage-sdks.md", "storage-sdk-python"),
		"storage-sdk-js":     docblocks.Block(t, "docs/storage-sdks.md", "storage-sdk-js"),
	}
	for _, sdk := range exampleSDKs {
		t.Run(sdk.block, func(t *testing.T) {
			bin := requireSDK(t, root, sdk)
			script := docblocks.Block(t, "docs/storage-sdks.md", "storage-sdk-env") + "\n" + texts[sdk.block]
			cmd := exec.CommandContext(t.Context(), "bash", "-euo", "pipefail", "-c", script)
			cmd.Dir = dir
			// The reader's interpreter is the one found (for Python, one
			// with boto3).
			cmd.Env = append(append(os.Environ(), sdkEnv...),
				"PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
			assert.Equal(t, strings.Join(sdkLifecycleOutput, "\n")+"\n", runSDK(t, cmd))
		})
	}
}

// nodeWithS3Client returns the node on PATH when the JavaScript example's
// node_modules has the SDK.
func nodeWithS3Client(root string) (string, error) {
	node, nerr := exec.LookPath("node")
	_, merr := os.Stat(filepath.Join(root, "examples", "s3-js", "node_modules", "@aws-sdk", "client-s3"))
	return node, errors.Join(nerr, merr)
}

// pythonWithBoto3 returns a python3 that imports boto3: the one on PATH, or
// Debian's (/usr/bin/python3, where apt-get install python3-boto3 puts it)
// when the one on PATH is another (pyenv's, say) without it.
func pythonWithBoto3() (string, error) {
	var errs []error
	for _, name := range []string{"python3", "/usr/bin/python3"} {
		python, err := exec.LookPath(name)
		if err == nil {
			err = exec.Command(python, "-c", "import boto3").Run()
		}
		if err == nil {
			return python, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", name, err))
	}
	return "", errors.Join(errs...)
}
