package harproxy

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"text/tabwriter"
)

// Summary is the proxy's live summary: what it saw, by operation.
type Summary struct {
	Exchanges int `json:"exchanges"`
	// Violations counts the violations of every exchange.
	Violations int `json:"violations"`
	// Failed counts the exchanges the upstream did not answer whole.
	Failed     int                `json:"failed"`
	Operations []OperationSummary `json:"operations"`
}

// OperationSummary is what the proxy saw of one operation ("" for requests
// of no operation of the spec).
type OperationSummary struct {
	Operation  string `json:"operation"`
	Exchanges  int    `json:"exchanges"`
	Violations int    `json:"violations"`
}

// Report counts the exchanges as they are checked; safe for concurrent use.
type Report struct {
	mu  sync.Mutex
	sum Summary
	ops map[string]*OperationSummary
}

func newReport() *Report { return &Report{ops: map[string]*OperationSummary{}} }

func (r *Report) add(op string, violations int, failed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sum.Exchanges++
	r.sum.Violations += violations
	if failed {
		r.sum.Failed++
	}
	o := r.ops[op]
	if o == nil {
		o = &OperationSummary{Operation: op}
		r.ops[op] = o
	}
	o.Exchanges++
	o.Violations += violations
}

// Summary is a copy of the counts, operations by name.
func (r *Report) Summary() Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sum
	s.Operations = make([]OperationSummary, 0, len(r.ops))
	for _, o := range r.ops {
		s.Operations = append(s.Operations, *o)
	}
	slices.SortFunc(s.Operations, func(a, b OperationSummary) int {
		switch {
		case a.Operation < b.Operation:
			return -1
		case a.Operation > b.Operation:
			return 1
		}
		return 0
	})
	return s
}

// WriteText prints s as a table, one row per operation.
func (s Summary) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "OPERATION\tEXCHANGES\tVIOLATIONS\n")
	for _, o := range s.Operations {
		name := o.Operation
		if name == "" {
			name = "(no operation of the spec)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\n", name, o.Exchanges, o.Violations)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d exchanges, %d violations, %d without a whole answer\n", s.Exchanges, s.Violations, s.Failed)
	return err
}
