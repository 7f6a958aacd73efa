package benchhttp

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var recorded = Recorded{
	Status: http.StatusCreated,
	Header: http.Header{"Content-Type": {"application/json"}, "X-Ratelimit-Limit": {"10000"}, "Link": {`<http://x/next>; rel="next"`}},
	Body:   []byte(`{"id":"g1","name":"team","roles":["end_user"]}`),
}

func TestCeilingHandler_AnswersEveryRequestWithTheRecordedBytes(t *testing.T) {
	srv := httptest.NewServer(CeilingHandler(recorded))
	defer srv.Close()
	for _, req := range []struct{ method, path, body string }{
		{http.MethodGet, "/v1/teams/demo/groups?count=100", ""},
		{http.MethodPost, "/v2/faxes", "to=%2B13125550800"},
		{http.MethodPut, "/demo-bucket?lifecycle=", "<LifecycleConfiguration/>"},
		{http.MethodGet, "/", ""},
	} {
		r, err := http.NewRequest(req.method, srv.URL+req.path, strings.NewReader(req.body))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(r)
		require.NoError(t, err)
		got, err := recordResponse(resp)
		require.NoError(t, err)
		assert.Equal(t, recorded, got, "%s %s", req.method, req.path)
	}
}

func TestRecordResponse_DropsWhatTheTransportWrites(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "abc")
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, "queued")
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	rec, err := recordResponse(resp)
	require.NoError(t, err)
	assert.Equal(t, http.StatusAccepted, rec.Status)
	assert.Equal(t, "queued", string(rec.Body))
	assert.Equal(t, "abc", rec.Header.Get("X-Request-Id"))
	assert.Empty(t, rec.Header.Get("Date"), "net/http writes its own Date")
	assert.Empty(t, rec.Header.Get("Content-Length"))
}

func TestRunCeiling_AnnouncesItsAddressAndStopsWhenStdinCloses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec.json")
	data, err := json.Marshal(recorded)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))

	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- runCeiling(path, stdinR, stdoutW) }()
	line, err := bufio.NewReader(stdoutR).ReadString('\n')
	require.NoError(t, err)
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	require.True(t, ok, line)

	resp, err := http.Get("http://" + addr + "/anything")
	require.NoError(t, err)
	got, err := recordResponse(resp)
	require.NoError(t, err)
	assert.Equal(t, recorded, got)

	require.NoError(t, stdinW.Close())
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the ceiling did not stop when its standard input closed")
	}
}

func TestRunCeiling_RefusesAMissingRecording(t *testing.T) {
	err := runCeiling(filepath.Join(t.TempDir(), "none.json"), strings.NewReader(""), io.Discard)
	assert.ErrorContains(t, err, "reading the recorded response")
}
