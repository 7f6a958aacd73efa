package benchhttp

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHistogram_BucketsCoverEveryValueInOrder(t *testing.T) {
	values := []uint64{0, 1, 63, 64, 65, 127, 128, 129, 1000, 1 << 20, 1<<20 + 12345, 1 << 40, 1<<63 - 1}
	for _, v := range values {
		i := bucketOf(v)
		require.Less(t, i, numBuckets, "value %d", v)
		lo, hi := bucketBounds(i)
		assert.LessOrEqual(t, lo, v, "value %d bucket %d", v, i)
		assert.GreaterOrEqual(t, hi, v, "value %d bucket %d", v, i)
		assert.LessOrEqual(t, float64(hi-lo), float64(lo)/subBuckets+1, "a bucket is at most 1/64 of its values wide")
	}
	// Consecutive buckets tile the number line with no gap and no overlap.
	for i := 1; i < numBuckets; i++ {
		_, prevHi := bucketBounds(i - 1)
		lo, _ := bucketBounds(i)
		require.Equal(t, prevHi+1, lo, "bucket %d", i)
	}
}

func TestHistogram_QuantilesOfAUniformSpread(t *testing.T) {
	var h Histogram
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	cases := []struct {
		q    float64
		want time.Duration
	}{
		{0, time.Microsecond},
		{0.5, 500 * time.Microsecond},
		{0.9, 900 * time.Microsecond},
		{0.99, 990 * time.Microsecond},
		{1, 1000 * time.Microsecond},
	}
	for _, c := range cases {
		got := h.Quantile(c.q)
		assert.GreaterOrEqual(t, got, c.want, "q=%v never understates", c.q)
		assert.InEpsilon(t, float64(c.want), float64(got), 1.0/64, "q=%v within 1/64", c.q)
	}
	assert.Equal(t, uint64(1000), h.Count())
	assert.Equal(t, time.Microsecond, h.Min())
	assert.Equal(t, time.Millisecond, h.Max())
	assert.Equal(t, 500500*time.Nanosecond, h.Mean())
}

func TestHistogram_QuantilesOfASkewedSpread(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h Histogram
	for range 20000 {
		// latencies between 50 µs and ~60 ms, skewed like a real run
		d := time.Duration(50e3 + r.ExpFloat64()*2e6)
		h.Record(d)
	}
	// The exact p99 of an exponential: 50 µs + 2 ms * ln(100) ~ 9.26 ms.
	assert.InEpsilon(t, 9.26e6, float64(h.Quantile(0.99)), 0.1)
	assert.InEpsilon(t, 50e3+2e6*0.6931, float64(h.Quantile(0.5)), 0.05)
}

func TestHistogram_MergeEqualsRecordingEverything(t *testing.T) {
	var a, b, all Histogram
	for i := range 500 {
		d := time.Duration(i*i) * time.Microsecond
		all.Record(d)
		if i%2 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	var merged Histogram
	merged.Merge(&a)
	merged.Merge(&b)
	merged.Merge(&Histogram{}) // an empty one changes nothing
	assert.Equal(t, all, merged)
}

func TestHistogram_Empty(t *testing.T) {
	var h Histogram
	assert.Zero(t, h.Quantile(0.99))
	assert.Zero(t, h.Mean())
	h.Record(-time.Second)
	assert.Zero(t, h.Quantile(1), "a negative duration counts as zero")
}
