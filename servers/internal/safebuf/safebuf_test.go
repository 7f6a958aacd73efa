package safebuf_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/apistack/apistack/servers/internal/safebuf"
)

func TestBuffer_KeepsEveryConcurrentWriteWhole(t *testing.T) {
	var b safebuf.Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				fmt.Fprintf(&b, "<%d.%d>", i, j)
				_ = b.String()
			}
		})
	}
	wg.Wait()
	out := b.String()
	assert.Equal(t, 800, strings.Count(out, "<"))
	for i := range 8 {
		assert.Contains(t, out, fmt.Sprintf("<%d.99>", i))
	}
}
