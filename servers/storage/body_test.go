package storage_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients/storage/sigv4"
	"github.com/apistack/apistack/gen/storageapi"
	"github.com/apistack/apistack/servers/storage"
	"github.com/apistack/apistack/servers/storage/storagetest"
)

// mib is the body size of the requests here: the largest body the server takes.
const mib = 1 << 20

// signing says how bodyRequest signs: not at all, with a wrong secret, or right.
type signing int

const (
	unsigned signing = iota
	wrongSecret
	rightSecret
)

// bodyRequest is a PUT of body (of length n, its SHA-256 declared) to the plain
// bucket, signed at now as s says.
func bodyRequest(t testing.TB, env *storagetest.Env, body io.Reader, n int64, hash string, s signing, now time.Time) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, env.URL+"/"+storagetest.Bucket+"?lifecycle", body)
	require.NoError(t, err)
	req.ContentLength = n
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("X-Cloud-Date", now.UTC().Format(sigv4.TimeFormat))
	req.Header.Set("X-Cloud-Content-Sha256", hash)
	if s == unsigned {
		return req
	}
	secret := env.Key.Secret
	if s == wrongSecret {
		secret = strings.Repeat("x", len(secret))
	}
	signed := sigv4.HeadersToSign(req.Header)
	cr := sigv4.CanonicalRequest(req.Method, sigv4.CanonicalURI(req.URL.Path, false), sigv4.CanonicalQuery(req.URL.Query()),
		sigv4.CanonicalHeaders(req.Header, req.URL.Host, signed), strings.Join(signed, ";"), hash)
	scope := sigv4.Cloud4.Scope(now, storage.DefaultRegion, storage.Service)
	sig := sigv4.Signature(sigv4.Cloud4.SigningKey(secret, now, storage.DefaultRegion, storage.Service),
		sigv4.Cloud4.StringToSign(now, scope, cr))
	req.Header.Set("Authorization", sigv4.Cloud4.AuthorizationHeader(env.Key.KeyID, scope, signed, sig))
	return req
}

// gatedBody is a 1 MiB body whose first 64 KiB are sent at once and the rest
// only after release is closed: a server that answers while the gate is shut
// answered without reading the body.
type gatedBody struct {
	release chan struct{}
	blocked chan struct{} // closed when the first part is sent and the gate is reached
	once    sync.Once
	sent    atomic.Int64
}

const gateAt = 64 << 10

func newGatedBody() *gatedBody {
	return &gatedBody{release: make(chan struct{}), blocked: make(chan struct{})}
}

func (g *gatedBody) Read(p []byte) (int, error) {
	sent := g.sent.Load()
	if sent >= mib {
		return 0, io.EOF
	}
	limit := int64(mib)
	if sent >= gateAt {
		g.once.Do(func() { close(g.blocked) })
		<-g.release
	} else {
		limit = gateAt
	}
	n := min(int64(len(p)), limit-sent)
	for i := range p[:n] {
		p[i] = 'x'
	}
	g.sent.Add(n)
	return int(n), nil
}

var gatedHash = sigv4.HashHex(bytes.Repeat([]byte("x"), mib))

// response is what a request sent in the background came back with.
type response struct {
	status int
	code   storageapi.ErrorCode
	err    error
}

func sendInBackground(t *testing.T, req *http.Request) <-chan response {
	t.Helper()
	out := make(chan response, 1)
	go func() {
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			out <- response{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		r := response{status: resp.StatusCode, err: err}
		if resp.StatusCode >= 300 {
			r.code = errorOf(t, body).Code
		}
		out <- r
	}()
	return out
}

func TestAuthentication_RefusesBeforeReadingTheBody(t *testing.T) {
	env := storagetest.Start(t, storagetest.Options{})
	for _, tc := range []struct {
		name string
		sign signing
		code storageapi.ErrorCode
	}{
		{"unsigned", unsigned, storageapi.ErrorCodeAccessDenied},
		{"wrong secret", wrongSecret, storageapi.ErrorCodeSignatureDoesNotMatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := newGatedBody()
			defer close(body.release)
			got := sendInBackground(t, bodyRequest(t, env, body, mib, gatedHash, tc.sign, time.Now()))
			select {
			case r := <-got:
				require.NoError(t, r.err)
				assert.Equal(t, http.StatusForbidden, r.status)
				assert.Equal(t, tc.code, r.code)
				assert.LessOrEqual(t, body.sent.Load(), int64(gateAt), "the answer came while the rest of the body was held back")
			case <-time.After(time.Minute):
				t.Fatal("no answer while the body was held back: the server waits for the body before authenticating")
			}
		})
	}

	// The control: a rightly signed request is answered only after its whole
	// body was read (and found not to be a lifecycle configuration).
	t.Run("signed", func(t *testing.T) {
		body := newGatedBody()
		got := sendInBackground(t, bodyRequest(t, env, body, mib, gatedHash, rightSecret, time.Now()))
		select {
		case <-body.blocked:
		case r := <-got:
			t.Fatalf("answered %d %s before the body was read", r.status, r.code)
		}
		close(body.release)
		r := <-got
		require.NoError(t, r.err)
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Equal(t, storageapi.ErrorCodeMalformedXML, r.code)
		assert.Equal(t, int64(mib), body.sent.Load())
	})
	requireNothingStored(t, env)
}

// maxAllocPerRefusedPut bounds what the whole process (the test's client and
// the server) allocates per refused 1 MiB PUT: a quarter of the body, so a
// server that buffered bodies before authenticating could not stay under it.
const maxAllocPerRefusedPut = mib / 4

// putConcurrently sends n PUTs of payload at once, the i-th signed as sign(i)
// says, checks that each is answered want, and returns the bytes the process
// allocated meanwhile.
//
// A refused body is not read: the server answers, closes its side, and
// half a second later (net/http's wait for the client to read the answer)
// closes the connection, which resets it while the client still writes the
// body. On a loaded machine the client may not have read the answer by then,
// and loses it: such a request fails with a broken pipe or a reset, which
// counts as refused when want is a refusal; at least one must be answered.
func putConcurrently(tb testing.TB, env *storagetest.Env, payload []byte, n int, sign func(i int) signing, want int) uint64 {
	tb.Helper()
	hash := sigv4.HashHex(payload)
	reqs := make([]*http.Request, n)
	for i := range reqs {
		reqs[i] = bodyRequest(tb, env, bytes.NewReader(payload), int64(len(payload)), hash, sign(i), time.Now())
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	var answered atomic.Int64
	errs := make(chan error, n)
	for _, req := range reqs {
		wg.Go(func() {
			resp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil && want >= http.StatusBadRequest && (errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)) {
				return
			}
			if err != nil {
				errs <- err
				return
			}
			answered.Add(1)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want {
				errs <- errors.New("answered " + resp.Status)
			}
		})
	}
	wg.Wait()
	runtime.ReadMemStats(&after)
	close(errs)
	for err := range errs {
		require.NoError(tb, err)
	}
	require.Positive(tb, answered.Load(), "no request was answered")
	return after.TotalAlloc - before.TotalAlloc
}

// unsignedOrWrong signs every other request with a wrong secret, leaving the
// others unsigned.
func unsignedOrWrong(i int) signing {
	if i%2 == 1 {
		return wrongSecret
	}
	return unsigned
}

func TestAuthentication_FiftyRefusedMiBPutsAllocateLittle(t *testing.T) {
	env := storagetest.Start(t, storagetest.Options{})
	payload := bytes.Repeat([]byte("x"), mib)
	const n = 50
	allocated := putConcurrently(t, env, payload, n, unsignedOrWrong, http.StatusForbidden)
	t.Logf("%d refused 1 MiB PUTs allocated %d KiB in all, %d KiB each", n, allocated>>10, allocated/n>>10)
	assert.Less(t, allocated/n, uint64(maxAllocPerRefusedPut), "per refused request")
	requireNothingStored(t, env)
}
