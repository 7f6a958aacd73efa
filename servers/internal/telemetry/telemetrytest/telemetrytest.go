// Package telemetrytest reads the metrics a test's servers expose: it
// fetches /metrics in the Prometheus text format and parses it with
// Prometheus's own text parser (expfmt), so a test proves the exposition is
// valid as well as what it counts.
package telemetrytest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// Families is a parsed scrape: the metric families by name.
type Families map[string]*dto.MetricFamily

// Scrape GETs url (a /metrics endpoint) with header set on the request,
// asking for the text format, and parses the answer.
func Scrape(ctx context.Context, client *http.Client, url string, header http.Header) (Families, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape %s: status %d", url, resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		return nil, fmt.Errorf("scrape %s: Content-Type %q is not the text format", url, ct)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: parse: %w", url, err)
	}
	return families, nil
}

// ScrapeHandler serves h (a telemetry's /metrics handler) for the length of
// one Scrape and returns what it parsed; a failed scrape fails the test.
func ScrapeHandler(t testing.TB, h http.Handler) Families {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	f, err := Scrape(t.Context(), srv.Client(), srv.URL, nil)
	require.NoError(t, err)
	return f
}

// Value is the value of the series of family name whose labels include
// labels (a counter's or a gauge's value, a histogram's sample count), summed
// over the series that match; 0 when none does.
func (f Families) Value(name string, labels map[string]string) float64 {
	mf := f[name]
	if mf == nil {
		return 0
	}
	var sum float64
	for _, m := range mf.GetMetric() {
		if !hasLabels(m, labels) {
			continue
		}
		switch {
		case m.GetCounter() != nil:
			sum += m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			sum += m.GetGauge().GetValue()
		case m.GetHistogram() != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		case m.GetUntyped() != nil:
			sum += m.GetUntyped().GetValue()
		}
	}
	return sum
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	have := map[string]string{}
	for _, l := range m.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}
