package tenantapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStatus_OfAnAnswerOfNoneAndOfNoError(t *testing.T) {
	answered := fmt.Errorf("wrapped: %w", &AnswerError{Op: "GetGroup", Status: 503})
	assert.Equal(t, 503, Status(answered))
	assert.Equal(t, -1, Status(errors.New("connection reset")), "no answer came")
	assert.Equal(t, 0, Status(nil))
}

func TestNextOffset_ReadsTheNextLink(t *testing.T) {
	tests := []struct {
		name  string
		links []string
		want  string
	}{
		{"next among others", []string{`<https://pam/v1/teams/a/groups?count=2&offset=b2Zm>; rel="next", <https://pam/v1/teams/a/groups?count=2>; rel="first"`}, "b2Zm"},
		{"in a second header", []string{`<https://pam/x?count=2>; rel="first"`, `<https://pam/x?offset=abc>; rel="next"`}, "abc"},
		{"last page", []string{`<https://pam/x?count=2>; rel="first"`}, ""},
		{"no header", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for _, l := range tt.links {
				h.Add("Link", l)
			}
			got, err := nextOffset(h)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestWalk_YieldsEveryPageThenStopsAtTheFirstError(t *testing.T) {
	pages := map[string][]int{"": {1, 2}, "p2": {3}}
	next := map[string]string{"": "p2"}
	var got []int
	for v, err := range walk(func(token string) ([]int, string, error) { return pages[token], next[token], nil }) {
		require.NoError(t, err)
		got = append(got, v)
	}
	assert.Equal(t, []int{1, 2, 3}, got)

	boom := errors.New("boom")
	calls := 0
	for _, err := range walk(func(string) ([]int, string, error) { calls++; return nil, "", boom }) {
		assert.ErrorIs(t, err, boom)
	}
	assert.Equal(t, 1, calls)
}

func TestTokenTransport_SignsInOnceAndAgainAfterA401(t *testing.T) {
	var current atomic.Value
	current.Store("t1")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+current.Load().(string) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if b, err := io.ReadAll(r.Body); err != nil || len(b) != 1 {
			w.WriteHeader(http.StatusBadRequest) // the body did not come whole
		}
	}))
	t.Cleanup(srv.Close)
	var issued atomic.Int32
	tt := &tokenTransport{next: oneShot, issue: func(context.Context) (string, error) {
		return fmt.Sprintf("t%d", issued.Add(1)), nil
	}}
	c := &http.Client{Transport: tt}
	send := func(body string) int {
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		require.NoError(t, err)
		resp, err := c.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusOK, send("a"))
	assert.Equal(t, http.StatusOK, send("b"))
	assert.Equal(t, int32(1), issued.Load(), "one sign-in for both")
	// The token expires: the next call signs in again and is sent again,
	// body and all.
	current.Store("t2")
	assert.Equal(t, http.StatusOK, send("c"))
	assert.Equal(t, int32(2), issued.Load())
	// A token refused however fresh: one more sign-in, then the 401.
	current.Store("never")
	assert.Equal(t, http.StatusUnauthorized, send("d"))
	assert.Equal(t, int32(3), issued.Load())
}
