package harproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/apistack/apistack/clients/contract"
	"github.com/apistack/apistack/servers/internal/har"
)

// Finding is a violation of one entry of a recording.
type Finding struct {
	// Entry is the entry's index in the recording.
	Entry     int
	Method    string
	URL       string
	Operation string
	har.Violation
}

// String is the finding on one line.
func (f Finding) String() string {
	op := f.Operation
	if op == "" {
		op = "(no operation)"
	}
	at := f.Pointer
	if at == "" {
		at = "-"
	}
	return fmt.Sprintf("entry %d %s (%s %s): %s %s: %s", f.Entry, op, f.Method, f.URL, f.Where, at, f.Message)
}

// CheckLog holds every entry of a recording to api's spec, offline (the
// recorded _violations are not read: each entry is checked anew). It
// returns the findings and how many entries were checked; entries with no
// answer are checked on their request alone.
func CheckLog(ctx context.Context, api contract.API, log *har.Log) ([]Finding, int, error) {
	checker, err := newChecker(api)
	if err != nil {
		return nil, 0, fmt.Errorf("conform --har: %w", err)
	}
	var out []Finding
	for i := range log.Entries {
		e := &log.Entries[i]
		u, err := url.Parse(e.Request.URL)
		if err != nil {
			out = append(out, Finding{Entry: i, Method: e.Request.Method, URL: e.Request.URL,
				Violation: har.Violation{Where: "request", Message: "the recorded URL does not parse: " + err.Error()}})
			continue
		}
		x, err := exchangeOf(e, u)
		if err != nil {
			out = append(out, Finding{Entry: i, Method: e.Request.Method, URL: u.Path,
				Violation: har.Violation{Where: "request", Message: err.Error()}})
			continue
		}
		switch api {
		case contract.Storage:
			PathStyle(x.Request)
		case contract.FaxWebhooks:
			x.Request.URL.Path, x.Request.URL.RawPath = "/", ""
		}
		op, vs := Check(ctx, checker, x)
		for _, v := range vs {
			if redactedAt(x, v) {
				// The recording holds no value there to check.
				continue
			}
			out = append(out, Finding{Entry: i, Method: e.Request.Method, URL: u.RequestURI(), Operation: op, Violation: v})
		}
	}
	return out, len(log.Entries), nil
}

// exchangeOf is a recorded entry as the checker takes it.
func exchangeOf(e *har.Entry, u *url.URL) (*Exchange, error) {
	body, err := e.Request.Body()
	if err != nil {
		return nil, fmt.Errorf("the recorded request body does not decode: %w", err)
	}
	header := e.Request.Header()
	// A redacted credential was sent: it counts as present, whatever its
	// scheme (which the recording no longer shows).
	if header.Get("Authorization") == har.Redacted {
		header.Set("Authorization", "Bearer "+har.Redacted)
	}
	req := (&http.Request{Method: e.Request.Method, URL: u, Host: u.Host, Header: header, Body: http.NoBody,
		ContentLength: int64(len(body))}).WithContext(context.Background())
	x := &Exchange{Request: req, RequestBody: body, RequestCut: e.Request.PostData != nil && e.Request.PostData.Truncated}
	if e.Response.Status == 0 {
		return x, nil
	}
	respBody, err := e.Response.Body()
	if err != nil {
		return nil, fmt.Errorf("the recorded response body does not decode: %w", err)
	}
	x.Answered, x.Status, x.Header, x.ResponseBody = true, e.Response.Status, e.Response.Header(), respBody
	x.ResponseUnread = e.Response.Content.Truncated
	return x, nil
}

// redactedAt reports a violation at a value the recording redacted: a
// secret header, or a member of a body at or under a redacted one.
func redactedAt(x *Exchange, v har.Violation) bool {
	header, body := x.Request.Header, x.RequestBody
	if v.Where == "response" {
		header, body = x.Header, x.ResponseBody
	}
	if name, ok := strings.CutPrefix(v.Pointer, "/header/"); ok {
		return header.Get(name) == har.Redacted
	}
	ptr, ok := strings.CutPrefix(v.Pointer, "/body")
	if !ok {
		return false
	}
	var doc any
	if json.Unmarshal(body, &doc) != nil {
		return false
	}
	tokens := strings.Split(ptr, "/")[1:]
	for _, tok := range append(tokens, "") {
		if s, ok := doc.(string); ok && s == har.Redacted {
			return true
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch d := doc.(type) {
		case map[string]any:
			doc = d[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(d) {
				return false
			}
			doc = d[i]
		default:
			return false
		}
	}
	return false
}
