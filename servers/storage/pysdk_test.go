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

// The lifecycle calls through the real boto3 (the python3 on PATH's, or
// Debian's python3-boto3, which `.ci/run` installs where no python3 has it),
// changed in nothing but its signer
// (examples/s3-python/cloud4_signer.py). botocore sends no Content-Type on
// PutBucketLifecycleConfiguration, which the server reads as XML, as S3
// does. Elsewhere the test skips without boto3, and fails without it under
// CI.
func TestPythonSDK_LifecycleWithOnlyTheSignerSwapped(t *testing.T) {
	dir, err := filepath.Abs("../../examples/s3-python")
	require.NoError(t, err)
	python, perr := pythonWithBoto3()
	if perr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("python3 with boto3 missing under CI (apt-get install python3-boto3): %v", perr)
		}
		t.Skip("python3 with boto3 missing (apt-get install python3-boto3)")
	}
	env := storagetest.Start(t, storagetest.Options{})
	cmd := exec.CommandContext(t.Context(), python, "lifecycle.py")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"APISTACK_S3_ENDPOINT="+env.URL,
		"APISTACK_S3_REGION="+storage.DefaultRegion,
		"APISTACK_S3_KEY_ID="+env.Key.KeyID,
		"APISTACK_S3_SECRET="+env.Key.Secret,
		"APISTACK_S3_BUCKET="+storagetest.Bucket,
		// The SDK must not find AWS settings of the machine it runs on.
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null",
		"PYTHONDONTWRITEBYTECODE=1",
	)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s\n%s", out, stderr.String())
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	assert.Equal(t, []string{
		`rule expire-logs Enabled prefix="logs/" expire-after=30d`,
		`rule abort-uploads Enabled prefix="" abort-uploads-after=7d`,
		`deleted: NoSuchLifecycleConfiguration`,
	}, lines)
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
	want := "rule expire-logs Enabled prefix=\"logs/\" expire-after=30d\n" +
		"rule abort-uploads Enabled prefix=\"\" abort-uploads-after=7d\n" +
		"deleted: NoSuchLifecycleConfiguration\n"
	assert.Contains(t, docblocks.Block(t, "docs/storage-sdks.md", "storage-sdk-env"), "jq")

	// Each block is named literally: that is how the guides' lint
	// (internal/docblocks) finds the blocks a test runs.
	for _, tc := range []struct{ block, text, needs string }{
		{"storage-sdk-python", docblocks.Block(t, "docs/storage-sdks.md", "storage-sdk-python"), "python3 with boto3 (apt-get install python3-boto3)"},
		{"storage-sdk-js", docblocks.Block(t, "docs/storage-sdks.md", "storage-sdk-js"), "node and examples/s3-js/node_modules (npm ci in examples/s3-js)"},
	} {
		t.Run(tc.block, func(t *testing.T) {
			if !sdkInstalled(root, tc.block) {
				if os.Getenv("CI") != "" {
					t.Fatalf("%s missing under CI", tc.needs)
				}
				t.Skipf("%s missing", tc.needs)
			}
			script := docblocks.Block(t, "docs/storage-sdks.md", "storage-sdk-env") + "\n" + tc.text
			cmd := exec.CommandContext(t.Context(), "bash", "-euo", "pipefail", "-c", script)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "PYTHONDONTWRITEBYTECODE=1")
			if python, err := pythonWithBoto3(); err == nil && tc.block == "storage-sdk-python" {
				// The reader's python3 is one with boto3.
				cmd.Env = append(cmd.Env, "PATH="+filepath.Dir(python)+string(os.PathListSeparator)+os.Getenv("PATH"))
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			require.NoError(t, err, "%s\n%s", out, stderr.String())
			assert.Equal(t, want, string(out))
		})
	}
}

// sdkInstalled reports whether the SDK a guide block runs is installed.
func sdkInstalled(root, block string) bool {
	if block == "storage-sdk-js" {
		_, nerr := exec.LookPath("node")
		_, merr := os.Stat(filepath.Join(root, "examples", "s3-js", "node_modules", "@aws-sdk", "client-s3"))
		return nerr == nil && merr == nil
	}
	_, err := pythonWithBoto3()
	return err == nil
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
