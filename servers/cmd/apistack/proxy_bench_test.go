package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/apistacktest"
	"github.com/apistack/apistack/clients/contract"
	"github.com/apistack/apistack/servers/cmd/apistack/internal/harproxy"
	"github.com/apistack/apistack/servers/internal/har"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/stack"
)

// load sends requests GET url from workers concurrent clients for d and
// returns the answers per second (every answer must be 200).
func load(b *testing.B, client *http.Client, target, token string, workers int, d time.Duration) float64 {
	b.Helper()
	var mu sync.Mutex
	total := 0
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			for time.Now().Before(deadline) {
				req, _ := http.NewRequest(http.MethodGet, target, nil)
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
				n++
			}
			mu.Lock()
			total += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	return float64(total) / d.Seconds()
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// BenchmarkProxyOverhead_PAMList lists the PAM groups three ways in
// interleaved rounds of the same load (32 clients, 1 s each): directly,
// through a bare reverse proxy (net/http/httputil's, the HTTP hop alone),
// and through a recording, validating apistack proxy. It reports the
// median over the rounds of each round's ratios: proxy/direct (the
// issue's figure) and proxy/bare (what checking and recording cost beyond
// the hop). Client, proxy and server share this machine's CPUs, so on a
// loaded machine with a loopback upstream the hop's own HTTP work weighs
// as much as a cached list does on the server. Each iteration is one
// round of the three: run it with -benchtime=7x.
func BenchmarkProxyOverhead_PAMList(b *testing.B) {
	s := apistacktest.Start(b, apistacktest.Options{Settings: stack.Settings{PAM: pam.Settings{RateLimit: 1 << 30}}})
	ctx := context.Background()
	token, err := s.PAM.Token(ctx)
	require.NoError(b, err)
	upstream, err := url.Parse(s.PAMURL)
	require.NoError(b, err)
	w, err := har.Create(filepath.Join(b.TempDir(), "bench.har"), har.Log{Creator: har.Creator{Name: "bench", Version: "1"}})
	require.NoError(b, err)
	defer w.Close()
	p, err := harproxy.New(harproxy.Config{API: contract.PAM, Upstream: upstream, Record: w})
	require.NoError(b, err)
	srv := httptest.NewServer(p)
	defer srv.Close()
	bareTransport := http.DefaultTransport.(*http.Transport).Clone()
	bareTransport.MaxIdleConnsPerHost = 256
	bareProxy := httputil.NewSingleHostReverseProxy(upstream)
	bareProxy.Transport = bareTransport
	bare := httptest.NewServer(bareProxy)
	defer bare.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	path := "/v1/teams/" + s.PAM.Team() + "/groups"

	var toDirect, toBare, direct, proxied []float64
	i := 0
	for b.Loop() {
		arms := []string{s.PAMURL, bare.URL, srv.URL}
		// Rotate which goes first, so a trend in the machine's load
		// weighs on every arm alike.
		got := map[string]float64{}
		for k := range arms {
			base := arms[(i+k)%len(arms)]
			got[base] = load(b, client, base+path, token, 32, time.Second)
		}
		i++
		direct, proxied = append(direct, got[s.PAMURL]), append(proxied, got[srv.URL])
		toDirect = append(toDirect, got[srv.URL]/got[s.PAMURL])
		toBare = append(toBare, got[srv.URL]/got[bare.URL])
	}
	p.Wait()
	b.ReportMetric(median(toDirect), "proxy/direct")
	b.ReportMetric(median(toBare), "proxy/bare")
	b.ReportMetric(median(direct), "direct-req/s")
	b.ReportMetric(median(proxied), "proxy-req/s")
	b.ReportMetric(float64(w.Entries()), "recorded")
}

// rssExchanges is how many exchanges BenchmarkProxyRSS_2000ExchangesOf1MiB
// sends (fewer under APISTACK_PROXY_RSS_EXCHANGES, to try it quickly).
var rssExchanges = func() int {
	if n, err := strconv.Atoi(os.Getenv("APISTACK_PROXY_RSS_EXCHANGES")); err == nil && n > 0 {
		return n
	}
	return 2000
}()

// procStatusKiB reads a field (VmHWM, VmRSS) of /proc/<pid>/status in KiB.
func procStatusKiB(pid int, field string) (int, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// BenchmarkProxyRSS_2000ExchangesOf1MiB runs the apistack binary's proxy
// in front of a service answering 1 MiB bodies and sends it 2,000
// requests of 1 MiB bodies (4 clients), every body recorded whole (the
// default cap is 1 MiB), then reports the proxy process's peak resident
// set (VmHWM) in MiB, after the first tenth of the exchanges and after
// them all. Run it with -benchtime=1x.
func BenchmarkProxyRSS_2000ExchangesOf1MiB(b *testing.B) {
	dir := b.TempDir()
	bin := apistackBinary(b)
	body := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(body)
	}))
	defer upstream.Close()

	for b.Loop() {
		path := filepath.Join(dir, "rss.har")
		out := &bytes.Buffer{}
		var mu sync.Mutex
		cmd := exec.Command(bin, "proxy", "--api", "pam", "--upstream", upstream.URL, "--addr", "127.0.0.1:0", "--record", path)
		pr, pw := io.Pipe()
		cmd.Stdout = pw
		stderr := &bytes.Buffer{}
		cmd.Stderr = stderr
		defer func() {
			if b.Failed() {
				b.Logf("apistack proxy's log:\n%s", stderr.String())
			}
		}()
		require.NoError(b, cmd.Start())
		exited := false
		defer func() {
			if !exited {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			}
		}()
		addr := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(pr)
			for sc.Scan() {
				mu.Lock()
				out.WriteString(sc.Text() + "\n")
				mu.Unlock()
				if m := proxyAddr.FindStringSubmatch(sc.Text()); m != nil {
					addr <- m[1]
				}
			}
		}()
		base := <-addr
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
		// send sends exchanges up to total, 4 at a time, and waits until
		// the live summary counts them all (every one recorded).
		sent := 0
		send := func(total int) {
			var wg sync.WaitGroup
			var next sync.Mutex
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						next.Lock()
						if sent == total {
							next.Unlock()
							return
						}
						sent++
						next.Unlock()
						resp, err := client.Post(base+"/v1/teams/demo/groups", "text/plain", bytes.NewReader(body))
						if err != nil {
							b.Error(err)
							return
						}
						n, err := io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if err != nil || n != int64(len(body)) {
							b.Errorf("answer of %d bytes: %v", n, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			require.Eventually(b, func() bool {
				resp, err := http.Get(base + harproxy.ReportPath)
				if err != nil {
					return false
				}
				defer resp.Body.Close()
				data, _ := io.ReadAll(resp.Body)
				return bytes.Contains(data, []byte(fmt.Sprintf(`"exchanges":%d,`, total)))
			}, time.Minute, 10*time.Millisecond)
		}
		// The peak after a tenth of the exchanges, and after them all: a
		// bounded proxy's does not grow with the exchanges recorded.
		send(rssExchanges / 10)
		early, err := procStatusKiB(cmd.Process.Pid, "VmHWM")
		require.NoError(b, err)
		send(rssExchanges)
		hwm, err := procStatusKiB(cmd.Process.Pid, "VmHWM")
		require.NoError(b, err)
		require.NoError(b, cmd.Process.Signal(os.Interrupt))
		require.NoError(b, cmd.Wait())
		exited = true
		pw.Close()
		info, err := os.Stat(path)
		require.NoError(b, err)
		b.ReportMetric(float64(hwm)/1024, "peak-RSS-MiB")
		b.ReportMetric(float64(early)/1024, "peak-RSS-MiB-after-10%")
		b.ReportMetric(float64(info.Size())/(1<<20), "HAR-MiB")
		require.NoError(b, os.Remove(path))
	}
}
