// Package drift replays the requests of a recorded HAR against a target (an
// apistack stand-in) and compares the target's answers with the recorded
// ones by shape, not value: the status, the presence of the response
// headers the spec declares, and the body's structure member by member
// (servers/internal/shape), values the spec marks as ids, timestamps or
// opaque tokens compared by presence alone.
//
// The recorded credentials (redacted in an apistack recording) are replaced
// by those of a demo-credentials.json-shaped file, and ids the target gave
// in place of recorded ones (a created group's, a fax's) are carried into
// the later requests that name them. Any HAR 1.2 file works: its entries of
// no operation of the API's spec are skipped.
package drift

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/apistack/apistack/clients/conform"
	"github.com/apistack/apistack/clients/contract"
	"github.com/apistack/apistack/servers/cmd/apistack/internal/harproxy"
	"github.com/apistack/apistack/servers/internal/har"
	"github.com/apistack/apistack/servers/internal/shape"
)

// Config says what to replay where.
type Config struct {
	// API is the spec the entries are routed and compared by: pam, fax,
	// storage or restaurant.
	API contract.API
	// Log is the recording.
	Log *har.Log
	// Target is the stand-in's base URL.
	Target string
	// Credentials hold the API's section, its base URL replaced by Target.
	Credentials conform.Credentials
	// Transport sends the replayed requests (http.DefaultTransport when nil).
	Transport http.RoundTripper
}

// Difference is one way the target's answer differs from the recorded one.
type Difference struct {
	// Entry is the entry's index in the recording.
	Entry     int
	Operation string
	// Field is where: "status", "header <Name>" or the body's JSON pointer
	// ("*" standing for any element of an array).
	Field   string
	Message string
}

// String is the difference on one line.
func (d Difference) String() string {
	return fmt.Sprintf("entry %d %s: %s: %s", d.Entry, d.Operation, d.Field, d.Message)
}

// Result is what a replay found.
type Result struct {
	Replayed    int
	Differences []Difference
	// Skipped lists the entries not replayed and why.
	Skipped []string
}

// Summary is the result on one line.
func (r *Result) Summary() string {
	return fmt.Sprintf("%d entries replayed, %d skipped, %d differences", r.Replayed, len(r.Skipped), len(r.Differences))
}

// Run replays cfg.Log's entries in order.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Log == nil {
		return nil, errors.New("drift: no recording")
	}
	target, err := url.Parse(strings.TrimRight(cfg.Target, "/"))
	if err != nil || (target.Scheme != "http" && target.Scheme != "https") || target.Host == "" {
		return nil, fmt.Errorf("drift: target %q is not an http(s) URL", cfg.Target)
	}
	checker, err := contract.ForAPI(cfg.API, nil)
	if err != nil {
		return nil, fmt.Errorf("drift: %w", err)
	}
	next := cfg.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	creds, err := newCredentials(cfg.API, cfg.Credentials, target.String(), next)
	if err != nil {
		return nil, err
	}
	r := &replayer{cfg: cfg, target: target, checker: checker, creds: creds, ids: map[string]string{}}
	// Entries are replayed in the order they started (a recorder appends
	// each as it ends, so concurrent exchanges' entries can be out of it).
	order := make([]int, len(cfg.Log.Entries))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cfg.Log.Entries[a].Started().Compare(cfg.Log.Entries[b].Started())
	})
	res := &Result{}
	for _, i := range order {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("drift: %w", err)
		}
		if err := r.replay(ctx, i, &cfg.Log.Entries[i], res); err != nil {
			return res, err
		}
	}
	return res, nil
}

type replayer struct {
	cfg     Config
	target  *url.URL
	checker *contract.Transport
	creds   credentials
	// ids maps a value the recording's server gave to the one the target
	// gave in its place.
	ids map[string]string
}

// replay sends entry i again and compares the answers.
func (r *replayer) replay(ctx context.Context, i int, e *har.Entry, res *Result) error {
	skip := func(why string) {
		res.Skipped = append(res.Skipped, fmt.Sprintf("entry %d (%s %s): %s", i, e.Request.Method, e.Request.URL, why))
	}
	recorded, err := url.Parse(e.Request.URL)
	if err != nil {
		skip("its URL does not parse")
		return nil
	}
	body, err := e.Request.Body()
	if err != nil {
		skip("its body does not decode: " + err.Error())
		return nil
	}
	req := &http.Request{Method: e.Request.Method, URL: recorded, Host: recorded.Host, Header: e.Request.Header(), Body: http.NoBody}
	if r.cfg.API == contract.Storage {
		harproxy.PathStyle(req)
	}
	checked, _ := r.checker.CheckRequest(ctx, req, nil)
	route := checked.Route()
	if route == nil {
		skip("no operation of the " + string(r.cfg.API) + " spec")
		return nil
	}
	op := route.Operation.OperationID
	if e.Response.Status == 0 {
		skip("no answer was recorded")
		return nil
	}
	if e.Request.PostData != nil && e.Request.PostData.Truncated {
		skip("its request body was cut at the recording's cap")
		return nil
	}

	path := r.mapPath(req.URL.EscapedPath())
	query := r.mapQuery(req.URL.Query())
	body = r.mapBody(req.Header.Get("Content-Type"), body)
	header := replayHeader(req.Header)
	path, header, body = r.creds.apply(op, path, header, body)
	if bytes.Contains(body, []byte(har.Redacted)) || strings.Contains(path+query.Encode(), url.QueryEscape(har.Redacted)) ||
		strings.Contains(path, har.Redacted) {
		skip("it was recorded with a redacted value the credentials do not replace")
		return nil
	}
	full, err := url.Parse(r.target.String() + path)
	if err != nil {
		skip("its path does not parse")
		return nil
	}
	full.RawQuery = query.Encode()
	out, err := http.NewRequestWithContext(ctx, e.Request.Method, full.String(), bytes.NewReader(body))
	if err != nil {
		skip(err.Error())
		return nil
	}
	out.Header = header
	if len(body) == 0 {
		out.Body, out.ContentLength = http.NoBody, 0
	}
	resp, err := r.creds.send(ctx, out, req.Header.Get("Authorization") != "")
	if err != nil {
		return fmt.Errorf("drift: entry %d %s: %w", i, op, err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("drift: entry %d %s: read the answer: %w", i, op, err)
	}
	res.Replayed++
	add := func(field, msg string) {
		res.Differences = append(res.Differences, Difference{Entry: i, Operation: op, Field: field, Message: msg})
	}
	if resp.StatusCode != e.Response.Status {
		add("status", fmt.Sprintf("recorded %d, target %d", e.Response.Status, resp.StatusCode))
		return nil
	}
	recHeader := e.Response.Header()
	if spec := shape.Response(route.Operation, resp.StatusCode); spec != nil {
		names := make([]string, 0, len(spec.Headers))
		for name := range spec.Headers {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			inRec, inTarget := recHeader.Get(name) != "", resp.Header.Get(name) != ""
			switch {
			case inRec && !inTarget:
				add("header "+name, "missing from the target")
			case inTarget && !inRec:
				add("header "+name, "present in the target only")
			}
		}
	}
	if e.Response.Content.Truncated {
		return nil
	}
	recBody, err := e.Response.Body()
	if err != nil || len(recBody) == 0 && len(got) == 0 {
		return nil
	}
	recDoc, recErr := shape.Decode(e.Response.Content.MimeType, recBody)
	gotDoc, gotErr := shape.Decode(resp.Header.Get("Content-Type"), got)
	switch {
	case recErr != nil && gotErr != nil:
		return nil
	case recErr != nil:
		add("body", "recorded "+describeErr(recErr)+", target "+shape.TypeName(gotDoc))
		return nil
	case gotErr != nil:
		add("body", "recorded "+shape.TypeName(recDoc)+", target "+describeErr(gotErr))
		return nil
	}
	recDoc = mapStrings(recDoc, func(s string) any {
		if s == har.Redacted {
			return shape.Unknown
		}
		return s
	})
	schema := shape.ResponseSchema(route.Operation, resp.StatusCode, resp.Header.Get("Content-Type"))
	for _, d := range shape.Diff(schema, recDoc, gotDoc) {
		field := d.Pointer
		if field == "" {
			field = "/"
		}
		add(field, d.Message)
	}
	shape.Pairs(schema, recDoc, gotDoc, func(a, b string) {
		if _, known := r.ids[a]; !known {
			r.ids[a] = b
		}
	})
	return nil
}

func describeErr(err error) string {
	if errors.Is(err, shape.ErrNotStructured) {
		return "not JSON or XML"
	}
	return "malformed (" + err.Error() + ")"
}

// mapPath replaces each path segment that is a recorded id.
func (r *replayer) mapPath(path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		raw, err := url.PathUnescape(s)
		if err != nil {
			continue
		}
		if v, ok := r.ids[raw]; ok {
			segs[i] = url.PathEscape(v)
		}
	}
	return strings.Join(segs, "/")
}

func (r *replayer) mapQuery(q url.Values) url.Values {
	for _, values := range q {
		for i, v := range values {
			if m, ok := r.ids[v]; ok {
				values[i] = m
			}
		}
	}
	return q
}

// mapBody replaces the recorded ids among a JSON or form body's strings.
func (r *replayer) mapBody(contentType string, body []byte) []byte {
	if len(body) == 0 || len(r.ids) == 0 {
		return body
	}
	if strings.HasPrefix(contentType, "application/x-www-form-urlencoded") {
		q, err := url.ParseQuery(string(body))
		if err != nil {
			return body
		}
		return []byte(r.mapQuery(q).Encode())
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&doc) != nil {
		return body
	}
	changed := false
	doc = mapStrings(doc, func(s string) any {
		if v, ok := r.ids[s]; ok {
			changed = true
			return v
		}
		return s
	})
	return remarshal(body, doc, changed)
}

func mapStrings(v any, f func(string) any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			x[k] = mapStrings(val, f)
		}
	case []any:
		for i := range x {
			x[i] = mapStrings(x[i], f)
		}
	case string:
		return f(x)
	}
	return v
}

// replayHeader is the recorded request's headers less those the target's
// connection, the credentials and the replay set anew.
func replayHeader(h http.Header) http.Header {
	out := http.Header{}
	for name, values := range h {
		switch http.CanonicalHeaderKey(name) {
		case "Host", "Content-Length", "Connection", "Keep-Alive", "Transfer-Encoding", "Te", "Trailer", "Upgrade",
			"Proxy-Connection", "Proxy-Authorization", "Authorization", "Cookie", "Accept-Encoding":
			continue
		}
		if slices.Contains(values, har.Redacted) {
			continue
		}
		out[http.CanonicalHeaderKey(name)] = slices.Clone(values)
	}
	return out
}
