package storage_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/storage"
	"github.com/apistack/apistack/servers/storage/storagetest"
)

// The lifecycle calls through the real @aws-sdk/client-s3 (JavaScript SDK
// v3, pinned in examples/s3-js/package.json), changed in nothing but its
// signer (examples/s3-js/cloud4-signer.mjs). The SDK sends the path-style
// form PUT /{bucket}/?lifecycle=. `.ci/run` installs the example's
// node_modules (npm ci); elsewhere the test skips without them, and fails
// without them under CI.
func TestJavaScriptSDK_LifecycleWithOnlyTheSignerSwapped(t *testing.T) {
	dir, err := filepath.Abs("../../examples/s3-js")
	require.NoError(t, err)
	node, nerr := exec.LookPath("node")
	_, merr := os.Stat(filepath.Join(dir, "node_modules", "@aws-sdk", "client-s3"))
	if nerr != nil || merr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node or examples/s3-js/node_modules missing under CI (run `npm ci` in examples/s3-js): %v %v", nerr, merr)
		}
		t.Skip("node or examples/s3-js/node_modules missing (npm ci in examples/s3-js)")
	}
	env := storagetest.Start(t, storagetest.Options{})
	cmd := exec.CommandContext(t.Context(), node, "lifecycle.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"APISTACK_S3_ENDPOINT="+env.URL,
		"APISTACK_S3_REGION="+storage.DefaultRegion,
		"APISTACK_S3_KEY_ID="+env.Key.KeyID,
		"APISTACK_S3_SECRET="+env.Key.Secret,
		"APISTACK_S3_BUCKET="+storagetest.Bucket,
		// The SDK must not find AWS settings of the machine it runs on.
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null",
	)
	var stderr strings.Builder
	cmd.Stderr = &stderr // the SDK's own warnings (such as its Node support notice)
	out, err := cmd.Output()
	require.NoError(t, err, "%s\n%s", out, stderr.String())
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	assert.Equal(t, []string{
		`rule expire-logs Enabled prefix="logs/" expire-after=30d`,
		`rule abort-uploads Enabled prefix="" abort-uploads-after=7d`,
		`deleted: NoSuchLifecycleConfiguration`,
	}, lines)
}
