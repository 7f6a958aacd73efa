package validation_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/safebuf"
	"github.com/apistack/apistack/servers/internal/validation"
)

// backgroundServer serves the test spec's POST /api/things, answering
// reply, with response checks in bg; hook runs for every violation.
func backgroundServer(t *testing.T, bg *validation.Background, reply string, hook func(error)) *httptest.Server {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData([]byte(spec))
	require.NoError(t, err)
	mw, err := validation.New(validation.Options{
		Spec:                doc,
		Authenticate:        func(context.Context, *openapi3filter.AuthenticationInput) error { return nil },
		ValidateResponses:   true,
		Background:          bg,
		OnResponseViolation: func(_ *http.Request, _ int, err error) { hook(err) },
	})
	require.NoError(t, err)
	e := echo.New()
	e.Use(mw)
	e.POST("/api/things", func(c echo.Context) error {
		c.Response().Header().Set("X-Count", "1")
		return c.Blob(http.StatusCreated, "application/json", []byte(reply))
	})
	hs := httptest.NewServer(e)
	t.Cleanup(hs.Close)
	return hs
}

func postThing(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Post(url+"/api/things", "application/json", strings.NewReader(`{"name":"a"}`))
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

func TestBackground_ChecksAfterSending(t *testing.T) {
	bg := validation.NewBackground(validation.BackgroundConfig{Workers: 2})
	var mu sync.Mutex
	var violations []error
	hs := backgroundServer(t, bg, `{"id":"x"}`, func(err error) {
		mu.Lock()
		defer mu.Unlock()
		violations = append(violations, err)
	})
	for range 3 {
		assert.Equal(t, http.StatusCreated, postThing(t, hs.URL))
	}
	bg.Wait()
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, violations, 3, "with a free worker every response is checked")
	assert.ErrorContains(t, violations[0], "value must be an integer")
	assert.Equal(t, validation.BackgroundStats{Checked: 3}, bg.Stats())
}

func TestBackground_WhenSaturatedChecksTheFirstOfEachPairAndASample(t *testing.T) {
	// One worker, held by the first check until the test releases it: every
	// later response finds the pool busy. The first of the pair was checked;
	// the sampler (a burst of one, then next to nothing) takes one more; the
	// rest are skipped and counted.
	var logs safebuf.Buffer
	bg := validation.NewBackground(validation.BackgroundConfig{Workers: 1, FirstPerPair: 1, SamplePerSecond: 1e-9,
		SummaryEvery: time.Nanosecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	held := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	reported := 0
	hs := backgroundServer(t, bg, `{"id":"x"}`, func(error) {
		mu.Lock()
		reported++
		mu.Unlock()
		once.Do(func() { close(held); <-release })
	})
	assert.Equal(t, http.StatusCreated, postThing(t, hs.URL))
	<-held
	for range 5 {
		assert.Equal(t, http.StatusCreated, postThing(t, hs.URL), "the answer never waits for a check")
	}
	close(release)
	bg.Wait()
	assert.Equal(t, validation.BackgroundStats{Checked: 2, Skipped: 4}, bg.Stats())
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 2, reported)
	assert.Contains(t, logs.String(), "skipped_total=4", "skipped checks are logged in a summary")
}

// Under load the checks would take as much CPU as the answers: with free
// workers, a check beyond the first of its pair still needs the CPU budget,
// and once the budget is spent only the sample is checked.
func TestBackground_ChecksBeyondTheFirstSpendTheCPUBudget(t *testing.T) {
	bg := validation.NewBackground(validation.BackgroundConfig{Workers: 4, FirstPerPair: 1, SamplePerSecond: 1e-9,
		CPUShare: 1e-12, Logger: slog.New(slog.DiscardHandler)})
	hs := backgroundServer(t, bg, `{"id":1}`, func(err error) { t.Errorf("unexpected violation: %v", err) })
	for range 20 {
		require.Equal(t, http.StatusCreated, postThing(t, hs.URL))
		bg.Wait() // every worker is free for the next response
	}
	assert.Equal(t, validation.BackgroundStats{Checked: 2, Skipped: 18}, bg.Stats(),
		"the first of the pair and the sample's one; the budget affords no other")
}
