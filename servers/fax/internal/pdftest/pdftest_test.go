package pdftest

import (
	"bytes"
	"compress/zlib"
	"io"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSpacesAfter_InflatesToThePrefixAndTheSpacesWithAValidChecksum(t *testing.T) {
	for _, n := range []int64{1, 258, 259, 100_000, 3 << 20} {
		data := spacesAfter([]byte("3 0 << >>"), n)
		zr, err := zlib.NewReader(bytes.NewReader(data))
		require.NoError(t, err)
		out, err := io.ReadAll(zr)
		require.NoError(t, err, "n=%d: the stream and its Adler-32 are valid", n)
		assert.Equal(t, "3 0 << >>", string(out[:9]))
		spaces := out[9:]
		assert.GreaterOrEqual(t, int64(len(spaces)), n)
		assert.Less(t, int64(len(spaces)), n+258)
		assert.Empty(t, bytes.Trim(spaces, " "))
	}
}

func TestBomb_IsAPDFWhosePagesAreCounted(t *testing.T) {
	api.DisableConfigDir()
	doc := Bomb(3, 1<<20)
	assert.Less(t, len(doc), 30<<10, "3 MiB of object streams in a few KiB")
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	n, err := api.PageCount(bytes.NewReader(doc), conf)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
}
