package conform

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Result is the outcome of one check.
type Result struct {
	// API is the API the check belongs to.
	API API `json:"api"`
	// Check names the check, such as "pagination-walk".
	Check string `json:"check"`
	// Passed is true when the implementation behaved as documented.
	Passed bool `json:"passed"`
	// Detail says what was seen on success, and what went wrong on failure.
	Detail string `json:"detail"`
	// Duration is how long the check took.
	Duration time.Duration `json:"-"`
}

// Report is the outcome of a run.
type Report struct {
	Results []Result
}

// Passed counts the checks that passed.
func (r Report) Passed() int {
	n := 0
	for _, res := range r.Results {
		if res.Passed {
			n++
		}
	}
	return n
}

// Failed counts the checks that failed.
func (r Report) Failed() int { return len(r.Results) - r.Passed() }

// ExitCode is the process status of the run: 0 when every check passed, 1
// when one failed (a run without any check has failed).
func (r Report) ExitCode() int {
	if len(r.Results) == 0 || r.Failed() > 0 {
		return 1
	}
	return 0
}

// Summary is the last line of a report: "N passed, M failed".
func (r Report) Summary() string {
	return fmt.Sprintf("%d passed, %d failed", r.Passed(), r.Failed())
}

// WriteTable writes one aligned row per check (check, result, time, detail)
// and the summary line.
func (r Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tRESULT\tTIME\tDETAIL")
	for _, res := range r.Results {
		verdict := "PASS"
		if !res.Passed {
			verdict = "FAIL"
		}
		fmt.Fprintf(tw, "%s/%s\t%s\t%s\t%s\n", res.API, res.Check, verdict, res.Duration.Round(time.Millisecond), res.Detail)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("conform: write table: %w", err)
	}
	_, err := fmt.Fprintln(w, r.Summary())
	return err
}

// jsonReport is the document WriteJSON writes.
type jsonReport struct {
	Results []jsonResult `json:"results"`
	Passed  int          `json:"passed"`
	Failed  int          `json:"failed"`
}

type jsonResult struct {
	Result
	DurationMS int64 `json:"duration_ms"`
}

// WriteJSON writes the report as one JSON document: results (api, check,
// passed, detail, duration_ms), passed and failed.
func (r Report) WriteJSON(w io.Writer) error {
	doc := jsonReport{Results: []jsonResult{}, Passed: r.Passed(), Failed: r.Failed()}
	for _, res := range r.Results {
		doc.Results = append(doc.Results, jsonResult{Result: res, DurationMS: res.Duration.Milliseconds()})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("conform: write json: %w", err)
	}
	return nil
}
