package storage_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/apistack/apistack/servers/storage/storagetest"
)

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
