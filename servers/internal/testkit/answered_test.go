package testkit_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/apistack/apistack/servers/internal/testkit"
)

// response is shaped as oapi-codegen's generated responses.
type response struct {
	Body         []byte
	HTTPResponse *http.Response
}

func (r *response) StatusCode() int { return r.HTTPResponse.StatusCode }

// recorder is a testing.TB that records failures instead of reporting
// them or ending the test (FailNow panics with the recorder).
type recorder struct {
	testing.TB
	failed bool
	errors int
	logs   []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failed = true
	r.errors++
	r.logs = append(r.logs, format)
}
func (r *recorder) FailNow() { r.failed = true; panic(r) }

// answered runs testkit.Answered on a recorder, reporting whether it failed.
func answered(t *testing.T, want int, resp *response, err error) (failed bool, got *response) {
	t.Helper()
	rec := &recorder{TB: t}
	defer func() {
		if p := recover(); p != nil && p != rec {
			panic(p)
		}
		failed = rec.failed
	}()
	got = testkit.Answered(rec, want, resp, err)
	return rec.failed, got
}

func TestAnswered(t *testing.T) {
	ok := &response{Body: []byte(`{"ok":true}`), HTTPResponse: &http.Response{StatusCode: http.StatusCreated}}
	failed, got := answered(t, http.StatusCreated, ok, nil)
	assert.False(t, failed, "the status wanted passes")
	assert.Same(t, ok, got, "the response is returned")

	failed, _ = answered(t, http.StatusOK, ok, nil)
	assert.True(t, failed, "another status fails")

	failed, _ = answered(t, http.StatusCreated, ok, errors.New("connection refused"))
	assert.True(t, failed, "an error fails")
}
