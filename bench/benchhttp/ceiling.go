package benchhttp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/labstack/echo/v4"
)

// CeilingEnv names the variable that turns a process running Main (or a test
// binary's TestMain calling RunCeilingIfChild) into a ceiling server: its
// value is the path of a Recorded response in JSON.
const CeilingEnv = "BENCHHTTP_CEILING_RESPONSE"

// Recorded is one response as the real server answered it: the ceiling
// server answers every request with exactly these bytes.
type Recorded struct {
	// Status is the HTTP status.
	Status int `json:"status"`
	// Header holds the headers (Date and Content-Length are written by net/http).
	Header http.Header `json:"header"`
	// Body is the body.
	Body []byte `json:"body"`
}

// recordResponse reads resp whole into a Recorded.
func recordResponse(resp *http.Response) (Recorded, error) {
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return Recorded{}, fmt.Errorf("reading the answer: %w", err)
	}
	h := resp.Header.Clone()
	h.Del("Date")
	h.Del("Content-Length")
	h.Del("Connection")
	h.Del("Keep-Alive")
	return Recorded{Status: resp.StatusCode, Header: h, Body: body}, nil
}

// CeilingHandler returns a bare echo server answering every request, whatever
// its method and path, with rec from memory, after reading its body (as a
// real server must).
func CeilingHandler(rec Recorded) http.Handler {
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	h := func(c echo.Context) error {
		if _, err := io.Copy(io.Discard, c.Request().Body); err != nil {
			return fmt.Errorf("reading the request body: %w", err)
		}
		out := c.Response().Header()
		for k, v := range rec.Header {
			out[k] = v
		}
		out.Set("Content-Length", fmt.Sprint(len(rec.Body)))
		c.Response().WriteHeader(rec.Status)
		_, err := c.Response().Write(rec.Body)
		return err
	}
	e.Any("/", h)
	e.Any("/*", h)
	return e
}

// RunCeilingIfChild serves the ceiling and exits when the process was started
// as a ceiling child (CeilingEnv is set); otherwise it returns at once. The
// child prints its address on a line of its own, then serves until its
// standard input closes (the harness ended) or it gets SIGTERM.
func RunCeilingIfChild() {
	path := os.Getenv(CeilingEnv)
	if path == "" {
		return
	}
	if err := runCeiling(path, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ceiling:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func runCeiling(path string, stdin io.Reader, stdout io.Writer) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading the recorded response: %w", err)
	}
	var rec Recorded
	if err := json.Unmarshal(data, &rec); err != nil {
		return fmt.Errorf("decoding the recorded response: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	srv := &http.Server{Handler: CeilingHandler(rec)}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		// The harness holds our standard input open while it lives.
		_, _ = io.Copy(io.Discard, bufio.NewReader(stdin))
		stop()
	}()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if _, err := fmt.Fprintf(stdout, "listening %s\n", ln.Addr()); err != nil {
		return fmt.Errorf("announcing the address: %w", err)
	}
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}
