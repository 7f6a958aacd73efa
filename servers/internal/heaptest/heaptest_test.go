package heaptest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/apistack/apistack/servers/internal/heaptest"
)

var sink []byte

func TestDuring_SeesWhatTheWorkHolds(t *testing.T) {
	peak := heaptest.During(func() {
		sink = make([]byte, 32<<20)
		for i := range sink {
			sink[i] = byte(i)
		}
	})
	t.Cleanup(func() { sink = nil })
	assert.GreaterOrEqual(t, peak, uint64(32<<20), "a 32 MiB buffer held at the end shows in the peak")
}

func TestPeak_NothingHeldIsLittle(t *testing.T) {
	stop := heaptest.Peak()
	peak := stop()
	assert.Less(t, peak, uint64(8<<20))
}
