// Package requestlog keeps the last requests each API answered, for the web
// console's Requests page: a fixed-size ring per API, newest first, so a
// busy API cannot grow it and a quiet one keeps its history.
package requestlog

import (
	"slices"
	"sync"
	"time"
)

// DefaultPerAPI is how many requests a Log keeps per API when New is given 0.
const DefaultPerAPI = 500

// Entry is one answered request. It holds no header, body or query string:
// those can carry credentials.
type Entry struct {
	// ID tells the requests of one process apart (AddViolations finds an
	// entry by it); 0 when the recorder gave none.
	ID uint64
	// Time is when the request arrived.
	Time time.Time
	// API is the API's name ("pam", "fax", "storage", "restaurant", "admin").
	API string
	// Operation is the spec's operationId, empty when the request matched none.
	Operation string
	// Method and Path are the request's method and URL path.
	Method, Path string
	// Status is the response's HTTP status.
	Status int
	// Latency is the time from arrival to the last byte written.
	Latency time.Duration
	// Violations are the spec violations found in the response, when
	// --validate-responses checked it. A response checked after it was sent
	// has them added later (AddViolations).
	Violations []string
}

// Log is a ring of recent entries per API. It is safe for concurrent use.
type Log struct {
	perAPI int

	mu    sync.Mutex
	rings map[string]*ring
}

type ring struct {
	entries []Entry
	next    int // index the next entry is written at, once the ring is full
}

// New returns a Log keeping the last perAPI entries of each API (0 means
// DefaultPerAPI).
func New(perAPI int) *Log {
	if perAPI <= 0 {
		perAPI = DefaultPerAPI
	}
	return &Log{perAPI: perAPI, rings: map[string]*ring{}}
}

// Add records e, dropping the oldest entry of its API when the ring is full.
func (l *Log) Add(e Entry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.rings[e.API]
	if r == nil {
		r = &ring{entries: make([]Entry, 0, min(l.perAPI, 64))}
		l.rings[e.API] = r
	}
	if len(r.entries) < l.perAPI {
		r.entries = append(r.entries, e)
		return
	}
	r.entries[r.next] = e
	r.next = (r.next + 1) % l.perAPI
}

// AddViolations adds violations to the entry of api with the given id, when
// the ring still holds it: a response checked in the background
// (--validate-responses) is found to break the spec after its entry was
// added. It reports whether the entry was found.
func (l *Log) AddViolations(api string, id uint64, violations ...string) bool {
	if id == 0 || len(violations) == 0 {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.rings[api]
	if r == nil {
		return false
	}
	for i := range r.entries {
		if e := &r.entries[i]; e.ID == id {
			// A new slice: copies handed out by Recent keep theirs.
			e.Violations = append(slices.Clip(e.Violations), violations...)
			return true
		}
	}
	return false
}

// Filter selects entries in Recent. Its zero value selects every entry.
type Filter struct {
	// API keeps one API's entries; empty keeps every API's.
	API string
	// Operation keeps one operationId's entries.
	Operation string
	// MinStatus and MaxStatus keep the statuses in [MinStatus, MaxStatus];
	// 0 means unbounded.
	MinStatus, MaxStatus int
	// ViolationsOnly keeps the entries with spec violations.
	ViolationsOnly bool
	// Limit caps the number of entries returned; 0 means no cap.
	Limit int
}

func (f Filter) match(e Entry) bool {
	switch {
	case f.Operation != "" && e.Operation != f.Operation:
		return false
	case f.MinStatus != 0 && e.Status < f.MinStatus:
		return false
	case f.MaxStatus != 0 && e.Status > f.MaxStatus:
		return false
	case f.ViolationsOnly && len(e.Violations) == 0:
		return false
	}
	return true
}

// Recent returns the entries f selects, newest first.
func (l *Log) Recent(f Filter) []Entry {
	l.mu.Lock()
	var all []Entry
	for api, r := range l.rings {
		if f.API != "" && api != f.API {
			continue
		}
		for i := range r.entries {
			if e := r.entries[i]; f.match(e) {
				all = append(all, e)
			}
		}
	}
	l.mu.Unlock()
	slices.SortStableFunc(all, func(a, b Entry) int { return b.Time.Compare(a.Time) })
	if f.Limit > 0 && len(all) > f.Limit {
		all = all[:f.Limit]
	}
	return all
}
