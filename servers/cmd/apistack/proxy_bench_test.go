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
	"regexp"
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
	"github.com/apistack/apistack/servers/internal/benchproc"
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
// throughput figure) and proxy/bare (what checking and recording cost
// beyond the hop).
//
// Client, proxy and server share this machine's CPUs, so the throughput
// of an arm is the CPU the process gets divided by the CPU an exchange
// costs: a proxy's share is taken from the server's. The benchmark
// therefore also reports the process's CPU per exchange in each arm
// (direct-cpu-us: client and server; hop-cpu-us: what the bare hop adds;
// proxy-cpu-us: what apistack proxy adds; check-cpu-us: what it adds
// beyond the bare hop, the checking and recording) and the throughput
// ratios those imply for a CPU-bound run (cpu-bound-proxy/direct,
// cpu-bound-bare/direct), which the machine's other load does not move.
// Each iteration is one round of the three: run it with -benchtime=7x.
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

	var toDirect, toBare, direct, proxied, directCPU, hopCPU, proxyCPU, checkCPU, cpuProxy, cpuBare []float64
	i := 0
	for b.Loop() {
		arms := []string{s.PAMURL, bare.URL, srv.URL}
		// Rotate which goes first, so a trend in the machine's load
		// weighs on every arm alike.
		got := map[string]float64{}
		cpu := map[string]float64{}
		for k := range arms {
			base := arms[(i+k)%len(arms)]
			before := time.Duration(benchproc.ProcessCPU())
			rate := load(b, client, base+path, token, 32, time.Second)
			// The proxy's last exchanges are recorded after their
			// answers: their CPU is the arm's.
			p.Wait()
			got[base] = rate
			cpu[base] = float64((time.Duration(benchproc.ProcessCPU()) - before).Microseconds()) / (rate * time.Second.Seconds())
		}
		i++
		direct, proxied = append(direct, got[s.PAMURL]), append(proxied, got[srv.URL])
		toDirect = append(toDirect, got[srv.URL]/got[s.PAMURL])
		toBare = append(toBare, got[srv.URL]/got[bare.URL])
		directCPU = append(directCPU, cpu[s.PAMURL])
		hopCPU = append(hopCPU, cpu[bare.URL]-cpu[s.PAMURL])
		proxyCPU = append(proxyCPU, cpu[srv.URL]-cpu[s.PAMURL])
		checkCPU = append(checkCPU, cpu[srv.URL]-cpu[bare.URL])
		cpuProxy = append(cpuProxy, cpu[s.PAMURL]/cpu[srv.URL])
		cpuBare = append(cpuBare, cpu[s.PAMURL]/cpu[bare.URL])
	}
	b.ReportMetric(median(toDirect), "proxy/direct")
	b.ReportMetric(median(toBare), "proxy/bare")
	b.ReportMetric(median(direct), "direct-req/s")
	b.ReportMetric(median(proxied), "proxy-req/s")
	b.ReportMetric(median(directCPU), "direct-cpu-us/op")
	b.ReportMetric(median(hopCPU), "hop-cpu-us/op")
	b.ReportMetric(median(proxyCPU), "proxy-cpu-us/op")
	b.ReportMetric(median(checkCPU), "check-cpu-us/op")
	b.ReportMetric(median(cpuProxy), "cpu-bound-proxy/direct")
	b.ReportMetric(median(cpuBare), "cpu-bound-bare/direct")
	b.ReportMetric(float64(w.Entries()), "recorded")
}

// BenchmarkProxyOverhead_PAMListOwnCPU measures the proxy as it is
// deployed: in front of a service whose CPUs it does not share. The
// benchmark's process (the load's clients and the PAM server) runs on one
// CPU, the apistack binary's proxy on another; each iteration is one round
// of the same load (32 clients, 1 s) sent directly and through the proxy,
// the order alternating. It reports the median over the rounds of
// proxy/direct, the answers per second of each arm, and the proxy
// process's CPU per exchange (proxy-cpu-us/op, from /proc) with the share
// of its CPU it used (proxy-cpu-busy: near 1 means the proxy, not the
// service, set the pace). BenchmarkProxyOverhead_PAMList measures the
// same with every part sharing every CPU. Needs two CPUs; run it with
// -benchtime=7x.
func BenchmarkProxyOverhead_PAMListOwnCPU(b *testing.B) {
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		b.Skip("needs taskset (util-linux) to give each side its CPU")
	}
	status, err := os.ReadFile("/proc/self/status")
	require.NoError(b, err)
	allowed := regexp.MustCompile(`(?m)^Cpus_allowed_list:\s*(\S+)$`).FindSubmatch(status)
	require.NotNil(b, allowed, "no Cpus_allowed_list in /proc/self/status")
	cpus := cpuList(string(allowed[1]))
	if len(cpus) < 2 {
		b.Skipf("needs two CPUs, this process may use %s", allowed[1])
	}
	pin := func(list string) {
		// Every thread of this process; a thread made later inherits its
		// maker's mask.
		out, err := exec.Command(taskset, "--all-tasks", "--cpu-list", "--pid", list, strconv.Itoa(os.Getpid())).CombinedOutput()
		require.NoError(b, err, "%s", out)
	}
	pin(strconv.Itoa(cpus[0]))
	defer pin(string(allowed[1]))

	s := apistacktest.Start(b, apistacktest.Options{Settings: stack.Settings{PAM: pam.Settings{RateLimit: 1 << 30}}})
	token, err := s.PAM.Token(context.Background())
	require.NoError(b, err)
	proxy := startProxy(b, exec.Command(taskset, "--cpu-list", strconv.Itoa(cpus[1]), apistackBinary(b), "proxy", "--addr", "127.0.0.1:0",
		"--api", "pam", "--upstream", s.PAMURL, "--record", filepath.Join(b.TempDir(), "bench.har")))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	path := "/v1/teams/" + s.PAM.Team() + "/groups"

	var ratio, direct, proxied, proxyCPU, busy []float64
	i := 0
	for b.Loop() {
		var d, p float64
		for k := range 2 {
			if (i+k)%2 == 0 {
				d = load(b, client, s.PAMURL+path, token, 32, time.Second)
				continue
			}
			before, start := benchproc.ProcCPU(proxy.Cmd.Process.Pid), time.Now()
			p = load(b, client, proxy.URL+path, token, 32, time.Second)
			used := time.Duration(benchproc.ProcCPU(proxy.Cmd.Process.Pid) - before)
			proxyCPU = append(proxyCPU, float64(used.Microseconds())/p)
			busy = append(busy, used.Seconds()/time.Since(start).Seconds())
		}
		i++
		direct, proxied, ratio = append(direct, d), append(proxied, p), append(ratio, p/d)
	}
	b.ReportMetric(median(ratio), "proxy/direct")
	b.ReportMetric(median(direct), "direct-req/s")
	b.ReportMetric(median(proxied), "proxy-req/s")
	b.ReportMetric(median(proxyCPU), "proxy-cpu-us/op")
	b.ReportMetric(median(busy), "proxy-cpu-busy")
}

// replayed answers every request with one answer the real service gave,
// without a network: the proxy's own work per exchange, measured alone.
type replayed struct {
	status int
	header http.Header
	body   []byte
}

func (r *replayed) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		_ = req.Body.Close()
	}
	return &http.Response{StatusCode: r.status, Status: fmt.Sprintf("%d %s", r.status, http.StatusText(r.status)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: r.header.Clone(),
		Body: io.NopCloser(bytes.NewReader(r.body)), ContentLength: int64(len(r.body)), Request: req}, nil
}

// discarding is a ResponseWriter that drops what it is sent.
type discarding struct{ header http.Header }

func (d *discarding) Header() http.Header         { return d.header }
func (d *discarding) Write(p []byte) (int, error) { return len(p), nil }
func (d *discarding) WriteHeader(int)             {}

// BenchmarkProxyExchange_PAMList is the CPU one exchange costs apistack
// proxy itself: a PAM groups list passed through, checked and recorded,
// one after the other, with the answer the real service gave replayed
// from memory (no sockets, no server), so the figure is the proxy's own
// (cpu-us/op, from the process's rusage, the recording included).
func BenchmarkProxyExchange_PAMList(b *testing.B) {
	s := apistacktest.Start(b, apistacktest.Options{Settings: stack.Settings{PAM: pam.Settings{RateLimit: 1 << 30}}})
	token, err := s.PAM.Token(context.Background())
	require.NoError(b, err)
	path := "/v1/teams/" + s.PAM.Team() + "/groups"
	req, err := http.NewRequest(http.MethodGet, s.PAMURL+path, nil)
	require.NoError(b, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(b, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(b, err)
	require.Equal(b, http.StatusOK, resp.StatusCode)
	upstream, err := url.Parse(s.PAMURL)
	require.NoError(b, err)
	w, err := har.Create(filepath.Join(b.TempDir(), "bench.har"), har.Log{Creator: har.Creator{Name: "bench", Version: "1"}})
	require.NoError(b, err)
	defer w.Close()
	p, err := harproxy.New(harproxy.Config{API: contract.PAM, Upstream: upstream, Record: w,
		Transport: &replayed{status: resp.StatusCode, header: resp.Header, body: body}})
	require.NoError(b, err)
	in := req.Header.Clone()
	in.Set("User-Agent", "Go-http-client/1.1")
	in.Set("Accept-Encoding", "gzip")
	b.ReportAllocs()
	before := time.Duration(benchproc.ProcessCPU())
	n := 0
	for b.Loop() {
		r := &http.Request{Method: http.MethodGet, URL: &url.URL{Path: path}, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: in.Clone(), Host: upstream.Host, Body: http.NoBody, RemoteAddr: "127.0.0.1:1"}
		p.ServeHTTP(&discarding{header: http.Header{}}, r)
		n++
	}
	p.Wait()
	b.ReportMetric(float64((time.Duration(benchproc.ProcessCPU())-before).Microseconds())/float64(n), "cpu-us/op")
	require.Equal(b, n, w.Entries(), "every exchange recorded")
	require.Zero(b, p.Report().Violations)
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
		proxy := startProxyProcess(b, bin, "--api", "pam", "--upstream", upstream.URL, "--record", path)
		base := proxy.URL
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
		early, err := procStatusKiB(proxy.Cmd.Process.Pid, "VmHWM")
		require.NoError(b, err)
		send(rssExchanges)
		hwm, err := procStatusKiB(proxy.Cmd.Process.Pid, "VmHWM")
		require.NoError(b, err)
		proxy.End()
		require.NoError(b, proxy.Err(), "the proxy ends cleanly on SIGTERM")
		info, err := os.Stat(path)
		require.NoError(b, err)
		b.ReportMetric(float64(hwm)/1024, "peak-RSS-MiB")
		b.ReportMetric(float64(early)/1024, "peak-RSS-MiB-after-10%")
		b.ReportMetric(float64(info.Size())/(1<<20), "HAR-MiB")
		require.NoError(b, os.Remove(path))
	}
}

// cpuList lists the CPUs of a Linux CPU list such as "0-3,8".
func cpuList(list string) []int {
	var cpus []int
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil {
				continue
			}
		}
		for cpu := first; cpu <= last; cpu++ {
			cpus = append(cpus, cpu)
		}
	}
	return cpus
}
