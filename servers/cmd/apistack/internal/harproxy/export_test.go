package harproxy

import "time"

// SetWorkerLinger sets how long a worker waits for more once the queue is
// empty, for the tests of workers ending and starting again; it returns
// the previous value.
func SetWorkerLinger(d time.Duration) time.Duration {
	old := workerLinger
	workerLinger = d
	return old
}

// Workers is how many workers are at work or lingering.
func (p *Proxy) Workers() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.workers
}
