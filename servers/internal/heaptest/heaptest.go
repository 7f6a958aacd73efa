// Package heaptest measures what the servers' tests and benchmarks make the
// heap grow by while a piece of work runs.
package heaptest

import (
	"runtime"
	"sync"
	"time"
)

// Peak collects garbage, then samples HeapInuse every 2 ms until stop is
// called; stop returns the peak, its own reading included, above what it was
// at the start.
func Peak() (stop func() uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapInuse, ms.HeapInuse
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		runtime.ReadMemStats(&ms)
		return max(peak, ms.HeapInuse) - base
	}
}

// Concurrently runs every job at once, each in its own goroutine, and
// returns the bytes the whole process allocated until the last had returned
// (garbage is collected first, and TotalAlloc counts every allocation, freed
// or not) with the errors the jobs returned, nil ones left out.
func Concurrently(jobs []func() error) (allocated uint64, errs []error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	failed := make(chan error, len(jobs))
	for _, job := range jobs {
		wg.Go(func() {
			if err := job(); err != nil {
				failed <- err
			}
		})
	}
	wg.Wait()
	runtime.ReadMemStats(&after)
	close(failed)
	for err := range failed {
		errs = append(errs, err)
	}
	return after.TotalAlloc - before.TotalAlloc, errs
}

// During runs f and returns the peak growth of HeapInuse while it ran.
func During(f func()) uint64 {
	stop := Peak()
	f()
	return stop()
}
