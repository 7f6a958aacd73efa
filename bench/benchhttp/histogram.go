package benchhttp

import (
	"math"
	"math/bits"
	"time"
)

// subBucketBits sets the histogram's precision: every power of two is split
// into 2^subBucketBits buckets, so a recorded value is reported within
// 1/64 (1.6 %) of itself.
const (
	subBucketBits = 6
	subBuckets    = 1 << subBucketBits
	// numBuckets covers every non-negative int64 nanosecond count.
	numBuckets = (64 - subBucketBits) * subBuckets
)

// Histogram records durations in log-linear buckets: exact below 64 ns, and
// within 1.6 % above. The zero value is empty and ready; it is not safe for
// concurrent use (each load worker keeps its own and they are merged).
type Histogram struct {
	counts   [numBuckets]uint64
	n        uint64
	sum      time.Duration
	min, max time.Duration
}

// bucketOf returns the index of the bucket holding v nanoseconds.
func bucketOf(v uint64) int {
	if v < subBuckets {
		return int(v)
	}
	shift := bits.Len64(v) - subBucketBits - 1 // v>>shift is in [64, 128)
	return (shift+1)*subBuckets + int(v>>shift) - subBuckets
}

// bucketBounds returns the smallest and largest value bucket i holds.
func bucketBounds(i int) (lo, hi uint64) {
	if i < subBuckets {
		return uint64(i), uint64(i)
	}
	shift := i/subBuckets - 1
	lo = uint64(subBuckets+i%subBuckets) << shift
	return lo, lo + (uint64(1) << shift) - 1
}

// Record adds one duration; a negative one counts as zero.
func (h *Histogram) Record(d time.Duration) {
	d = max(d, 0)
	h.counts[bucketOf(uint64(d))]++
	if h.n == 0 || d < h.min {
		h.min = d
	}
	if d > h.max {
		h.max = d
	}
	h.n++
	h.sum += d
}

// Merge adds every value recorded in o.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.n += o.n
	h.sum += o.sum
}

// Count returns the number of recorded values.
func (h *Histogram) Count() uint64 { return h.n }

// Min returns the smallest recorded value (0 when empty).
func (h *Histogram) Min() time.Duration { return h.min }

// Max returns the largest recorded value (0 when empty).
func (h *Histogram) Max() time.Duration { return h.max }

// Mean returns the mean of the recorded values (0 when empty).
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return h.sum / time.Duration(h.n)
}

// Quantile returns the value at or below which the fraction q (0..1) of the
// recorded values lie: the upper bound of the bucket holding the value of rank
// ceil(q*n), kept within the recorded minimum and maximum, so it overstates a
// latency by at most 1.6 %, never understates it. Empty, it returns 0.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	q = min(max(q, 0), 1)
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = max(rank, 1)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			_, hi := bucketBounds(i)
			return min(max(time.Duration(hi), h.min), h.max)
		}
	}
	return h.max
}
