package testkit_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/testkit"
)

func TestProcess_AwaitThenEndOnCleanup(t *testing.T) {
	var p *testkit.Process
	t.Run("runs", func(t *testing.T) {
		p = testkit.Start(t, exec.Command("sleep", "60"), testkit.Stop{Group: true, Grace: 5 * time.Second}, "sleep", nil)
		polls := 0
		p.Await(t, 10*time.Second, time.Millisecond, func() bool { polls++; return polls == 3 }, "three polls", func() string { return "" })
		assert.Equal(t, 3, polls)
		select {
		case <-p.Exited():
			t.Fatal("ended before the test did")
		default:
		}
	})
	select { // the subtest's cleanup ended it (SIGTERM)
	case <-p.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("not ended when its test ended")
	}
	require.Error(t, p.Err(), "killed by a signal")
}

func TestProcess_KillEndsAtOnce(t *testing.T) {
	p := testkit.Start(t, exec.Command("sleep", "60"), testkit.Stop{}, "sleep", nil)
	p.Kill()
	assert.Error(t, p.Err())
	p.End() // ended already: nothing to do
}

func TestRequest_SendsTokenFormAndHeaders(t *testing.T) {
	var got *http.Request
	var body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		got, body = r, string(data)
		w.WriteHeader(http.StatusTeapot)
		_, _ = io.WriteString(w, "answer")
	}))
	defer srv.Close()

	resp, data := testkit.Request{Method: http.MethodPost, URL: srv.URL + "/x", Token: "tok", Header: []string{"X-One", "1"}}.
		Form(url.Values{"a": {"b c"}}).Do(t)
	assert.Equal(t, http.StatusTeapot, resp.StatusCode)
	assert.Equal(t, "answer", string(data))
	assert.Equal(t, "Bearer tok", got.Header.Get("Authorization"))
	assert.Equal(t, "application/x-www-form-urlencoded", got.Header.Get("Content-Type"))
	assert.Equal(t, "1", got.Header.Get("X-One"))
	assert.Equal(t, "a=b+c", body)

	_, _ = testkit.Request{Method: http.MethodPut, URL: srv.URL}.JSON(map[string]int{"n": 1}).Do(t)
	assert.Equal(t, "application/json", got.Header.Get("Content-Type"))
	assert.Empty(t, got.Header.Get("Authorization"), "no token, no credentials")
	assert.JSONEq(t, `{"n":1}`, body)
}

func TestReadAnswer_StatusAndWholeBodyOrTheError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusTeapot)
		_, _ = io.WriteString(w, "answer")
	}))
	defer srv.Close()
	code, body, err := testkit.ReadAnswer(http.Get(srv.URL))
	require.NoError(t, err)
	assert.Equal(t, http.StatusTeapot, code)
	assert.Equal(t, "answer", string(body))

	failed := errors.New("no answer")
	code, body, err = testkit.ReadAnswer(nil, failed)
	assert.ErrorIs(t, err, failed)
	assert.Zero(t, code)
	assert.Nil(t, body)
}

func TestSQLite_RefuseWritesAndAllow(t *testing.T) {
	db := testkit.SQLite(t)
	_, err := db.Exec(`INSERT INTO t (x) VALUES (1)`)
	require.NoError(t, err)
	allow := testkit.RefuseWrites(t, db)
	_, err = db.Exec(`INSERT INTO t (x) VALUES (2)`)
	require.Error(t, err)
	allow()
	_, err = db.Exec(`INSERT INTO t (x) VALUES (3)`)
	require.NoError(t, err)
}

func TestTools_FindsAProgramAndSkipsWithoutOne(t *testing.T) {
	assert.NotEmpty(t, testkit.Tools(t, "sh")[0])
	t.Setenv("CI", "")
	var skipped bool
	t.Run("missing", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		testkit.Tools(t, "no-such-program-apistack")
		t.Error("a missing program did not end the test")
	})
	assert.True(t, skipped, "without CI a missing program skips")
}
