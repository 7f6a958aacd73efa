package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/apiserver"
)

// TestRunServers_ReadyUntilShutdownStartsWhileInFlightRequestsFinish: on
// SIGTERM (ctx ends) /readyz turns 503 at once and stays reachable for the
// drain, while a request in flight finishes with its answer.
func TestRunServers_ReadyUntilShutdownStartsWhileInFlightRequestsFinish(t *testing.T) {
	readiness := apiserver.NewReadiness(func(context.Context) error { return nil })
	entered, release := make(chan struct{}), make(chan struct{})
	slow := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		close(entered)
		<-release
		_, _ = io.WriteString(w, "finished")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	base := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() {
		done <- runServers(ctx, logger, []listener{{name: "test", ln: ln, handler: readiness.Wrap(slow)}}, testLimits,
			shutdownPlan{drain: 2 * time.Second, timeout: 5 * time.Second, readiness: readiness})
	}()

	status := func() int {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return 0
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusServiceUnavailable, status(), "not ready before Start")
	readiness.Start()
	assert.Equal(t, http.StatusOK, status())

	inFlight := make(chan string, 1)
	go func() {
		resp, err := http.Get(base + "/work")
		if err != nil {
			inFlight <- err.Error()
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		inFlight <- string(body)
	}()
	<-entered
	cancel() // SIGTERM
	require.Eventually(t, func() bool { return status() == http.StatusServiceUnavailable }, 2*time.Second, 10*time.Millisecond,
		"503 from the start of the shutdown, on a port still open")
	close(release)
	assert.Equal(t, "finished", <-inFlight, "the request in flight finishes")
	require.NoError(t, <-done)
	assert.Equal(t, 0, status(), "the port is closed once the shutdown is done")
}
