package storage_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/protocol/sigv4"
	"github.com/apistack/apistack/servers/internal/heaptest"
	"github.com/apistack/apistack/servers/storage/storagetest"
)

// manyRules is a lifecycle configuration of exactly size bytes holding as
// many well-formed rules as fit (about 9,000 in 1 MiB, nine times the
// protocol's 1,000): each rule valid, the document refused for its count.
func manyRules(size int) []byte {
	const head = `<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`
	const tail = `</LifecycleConfiguration>`
	var b bytes.Buffer
	b.WriteString(head)
	for i := 0; ; i++ {
		rule := fmt.Sprintf(`<Rule><ID>rule-%d</ID><Filter><Prefix>logs/%d/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>30</Days></Expiration></Rule>`, i, i)
		if b.Len()+len(rule)+len(tail) > size {
			break
		}
		b.WriteString(rule)
	}
	b.WriteString(strings.Repeat(" ", size-b.Len()-len(tail)))
	b.WriteString(tail)
	return b.Bytes()
}

// parallelSignedPuts sends n validly signed PUTs of doc at once and returns
// the peak heap growth while they were in flight; every one must answer want.
func parallelSignedPuts(tb testing.TB, env *storagetest.Env, doc []byte, n, want int) uint64 {
	tb.Helper()
	hash := sigv4.HashHex(doc)
	reqs := make([]*http.Request, n)
	for i := range reqs {
		reqs[i] = bodyRequest(tb, env, bytes.NewReader(doc), int64(len(doc)), hash, rightSecret, time.Now())
	}
	stop := heaptest.Peak()
	var wg sync.WaitGroup
	statuses := make(chan int, n)
	for _, req := range reqs {
		wg.Go(func() {
			resp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				statuses <- 0
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses <- resp.StatusCode
		})
	}
	wg.Wait()
	peak := stop()
	close(statuses)
	for s := range statuses {
		require.Equal(tb, want, s)
	}
	return peak
}

// maxPeakFor80 is the most heap 80 parallel 1 MiB signed lifecycle PUTs may
// add while in flight (the target is 150 MB of RSS).
const maxPeakFor80 = 150 << 20

func TestLifecycle_EightyParallelMiBPutsOfTooManyRulesStayBounded(t *testing.T) {
	env := storagetest.Start(t, storagetest.Options{})
	doc := manyRules(mib)
	peak := parallelSignedPuts(t, env, doc, 80, http.StatusBadRequest)
	t.Logf("80 parallel 1 MiB signed PUTs: peak heap growth %.1f MiB", float64(peak)/(1<<20))
	assert.Less(t, peak, uint64(maxPeakFor80))
}

// BenchmarkLifecycle80ParallelMiBPuts sends 80 validly signed 1 MiB lifecycle
// configurations of about 9,000 rules at once per iteration and reports the
// peak heap growth while they are in flight, MiB-peak.
func BenchmarkLifecycle80ParallelMiBPuts(b *testing.B) {
	env := storagetest.Start(b, storagetest.Options{})
	doc := manyRules(mib)
	var peaks []float64
	for b.Loop() {
		peaks = append(peaks, float64(parallelSignedPuts(b, env, doc, 80, http.StatusBadRequest))/(1<<20))
	}
	b.ReportMetric(median(peaks), "MiB-peak")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkPut1MiBConcurrently sends batches of 50 concurrent 1 MiB PUTs (one
// batch per iteration) and reports the bytes the whole process (the
// benchmark's client and the server) allocates per request, B/req. Refused
// requests (unsigned, or signed with a wrong secret) are answered 403 from
// their headers, their bodies never read; the control, rightly signed 1 MiB
// bodies that are not lifecycle configurations, shows what reading a body
// costs (400 MalformedXML).
func BenchmarkPut1MiBConcurrently(b *testing.B) {
	const batch = 50
	payload := bytes.Repeat([]byte("x"), mib)
	for _, bc := range []struct {
		name string
		sign func(int) signing
		want int
	}{
		{"refused", unsignedOrWrong, http.StatusForbidden},
		{"signed-control", func(int) signing { return rightSecret }, http.StatusBadRequest},
	} {
		b.Run(bc.name, func(b *testing.B) {
			env := storagetest.Start(b, storagetest.Options{})
			var allocated uint64
			for b.Loop() {
				allocated += putConcurrently(b, env, payload, batch, bc.sign, bc.want)
			}
			b.ReportMetric(float64(allocated)/float64(b.N*batch), "B/req")
		})
	}
}
