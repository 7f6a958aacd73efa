package heaptest_test

import (
	"errors"
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

func TestConcurrently_CountsWhatEveryJobAllocatesAndReturnsTheirErrors(t *testing.T) {
	boom := errors.New("boom")
	jobs := make([]func() error, 4)
	for i := range jobs {
		jobs[i] = func() error {
			sink2[i] = make([]byte, 1<<20)
			if i%2 == 1 {
				return boom
			}
			return nil
		}
	}
	allocated, errs := heaptest.Concurrently(jobs)
	t.Cleanup(func() { sink2 = [4][]byte{} })
	assert.GreaterOrEqual(t, allocated, uint64(4<<20), "the four 1 MiB buffers are counted")
	assert.Equal(t, []error{boom, boom}, errs, "each job's error is returned, nil ones left out")
}

var sink2 [4][]byte
