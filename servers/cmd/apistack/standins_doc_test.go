package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/apistack/apistack/internal/docblocks"
	"github.com/apistack/apistack/servers/internal/har/hartest"
	"github.com/apistack/apistack/servers/internal/testkit"
)

// The guide docs/stand-ins.md runs as written, its three workflows one
// after the other beside `apistack serve --demo`: record through the
// proxy, check the recording offline, replay it against the stand-in.
func TestStandInsGuide_RecordCheckAndDiffRun(t *testing.T) {
	testkit.Tools(t, "bash", "curl", "jq")
	dir := t.TempDir()
	bin := apistackBinary(t)
	_, _, stop := startServe(t, filepath.Join(dir, "data"))
	t.Cleanup(func() { assert.NoError(t, stop()) })
	env := []string{"PATH=" + filepath.Dir(bin) + ":" + os.Getenv("PATH"), "PROXY_ADDR=" + freeAddrs(t, 1)[0]}

	out := docblocks.Run(t, "docs/stand-ins.md", "standins-record", dir, env...)
	assert.Contains(t, out, `"exchanges":4,"violations":0`)
	assert.Contains(t, out, "4 exchanges, 0 violations")
	var ops []string
	for _, e := range hartest.ReadFile(t, filepath.Join(dir, "pam.har")).Entries {
		ops = append(ops, e.Operation)
	}
	assert.ElementsMatch(t, []string{"IssueServiceToken", "ListGroups", "CreateGroup", "DeleteGroup"}, ops)

	out = docblocks.Run(t, "docs/stand-ins.md", "standins-conform", dir, env...)
	assert.Contains(t, out, "4 entries checked against the pam spec, 0 violations")

	out = docblocks.Run(t, "docs/stand-ins.md", "standins-drift", dir, env...)
	assert.Contains(t, out, "4 entries replayed, 0 skipped, 0 differences")
	assert.Equal(t, 1, strings.Count(out, "\n"), "the summary alone: %s", out)
}
