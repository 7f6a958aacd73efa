package contractcoverage

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRecord_EachPairOnceAndReadBack(t *testing.T) {
	dir := t.TempDir()
	// Two recorders stand for two test processes writing the same directory.
	a := newRecorder(dir, ".pairs")
	b := newRecorder(dir, ".pairs")
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			require.NoError(t, a.write(Pair{"pam", "listGroups", 200 + i%3}.String()))
			require.NoError(t, b.write(Pair{"fax", fmt.Sprintf("op%d", i%5), 202}.String()))
		})
	}
	wg.Wait()
	require.NoError(t, a.file.Close())
	require.NoError(t, b.file.Close())

	got, err := ReadDir(dir)
	require.NoError(t, err)
	want := map[Pair]bool{}
	for i := range 3 {
		want[Pair{"pam", "listGroups", 200 + i}] = true
	}
	for i := range 5 {
		want[Pair{"fax", fmt.Sprintf("op%d", i), 202}] = true
	}
	assert.Equal(t, want, got)
}

func TestRecord_OffWithoutADirectory(t *testing.T) {
	r := newRecorder("", ".pairs")
	require.NoError(t, r.write(Pair{"pam", "listGroups", 200}.String()))
	assert.Nil(t, r.file)
}

func TestParsePair(t *testing.T) {
	p, err := ParsePair("storage putBucketLifecycle 200\n")
	require.NoError(t, err)
	assert.Equal(t, Pair{"storage", "putBucketLifecycle", 200}, p)
	for _, bad := range []string{"", "pam listGroups", "pam listGroups ok", "a b 1 2"} {
		_, err := ParsePair(bad)
		assert.Error(t, err, bad)
	}
}
