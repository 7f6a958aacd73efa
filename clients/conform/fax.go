package conform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"

	"github.com/apistack/apistack/clients/fax"
	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/protocol/contract"
)

// The fax checks' test numbers (the spec's table) and document.
const (
	faxDelivered = "+13125550800"
	faxUserBusy  = "+13125550801"
	samplePages  = 2
	mediaPath    = "/conform/sample.pdf"
	webhookPath  = "/conform/webhooks"
)

// deliveredEvents is the documented order of a delivered fax's events.
var deliveredEvents = []string{"fax.queued", "fax.media.processed", "fax.sending.started", "fax.delivered"}

// outboundOrder is the documented order of an outbound fax's states.
var outboundOrder = []faxapi.FaxStatus{"queued", "media.processed", "originated", "sending", "delivered"}

// faxChecker holds what the fax checks share.
type faxChecker struct {
	x        *exchange
	creds    FaxCredentials
	receiver *receiver
}

func faxSuite(cfg Config) ([]check, func(), error) {
	if cfg.Credentials.Fax == nil {
		return nil, nil, errors.New("the credentials have no fax section")
	}
	creds := *cfg.Credentials.Fax
	if cfg.BaseURL != "" {
		creds.BaseURL = cfg.BaseURL
	}
	if creds.APIKey == "" || creds.ConnectionID == "" || creds.From == "" || creds.WebhookPublicKey == "" {
		return nil, nil, errors.New("the fax section needs api_key, connection_id, from and webhook_public_key")
	}
	key, err := fax.ParseWebhookPublicKey(creds.WebhookPublicKey)
	if err != nil {
		return nil, nil, fmt.Errorf("fax: webhook_public_key: %w", err)
	}
	x, err := newExchange(contract.Fax, creds.BaseURL, cfg.Transport)
	if err != nil {
		return nil, nil, fmt.Errorf("fax: %w", err)
	}
	rcv, err := startReceiver(cfg.Listen, cfg.ReceiverURL, key)
	if err != nil {
		return nil, nil, fmt.Errorf("fax: %w", err)
	}
	f := &faxChecker{x: x, creds: creds, receiver: rcv}
	return []check{
		{"authentication", f.checkAuthentication},
		{"send-and-progress", f.checkSendAndProgress},
		{"test-number-outcome", f.checkTestNumberOutcome},
		{"list-pagination-meta", f.checkListMeta},
		{"validation-errors", f.checkValidation},
		{"application-lifecycle", f.checkApplicationLifecycle},
		{"webhook-signatures", f.checkWebhooks},
	}, rcv.close, nil
}

// receiver is the runner's local HTTP server: it serves the document the
// faxes send and receives the webhooks, verified by clients/fax's handler.
type receiver struct {
	srv *httptest.Server
	// url is where the implementation reaches srv.
	url string
	mu  sync.Mutex
	// events are the verified deliveries, in arrival order.
	events []fax.Event
	// rejected are the deliveries the handler refused (forged, stale, malformed).
	rejected []string
	// changed is closed and replaced whenever a delivery arrives.
	changed chan struct{}
}

func startReceiver(addr, publicURL string, key []byte) (*receiver, error) {
	pdf, err := samplePDF(samplePages)
	if err != nil {
		return nil, err
	}
	r := &receiver{changed: make(chan struct{})}
	hook, err := fax.NewWebhookHandler(key, func(_ context.Context, e fax.Event) error {
		r.record(func() { r.events = append(r.events, e) })
		return nil
	})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+mediaPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(pdf)
	})
	mux.HandleFunc("POST "+webhookPath, func(w http.ResponseWriter, req *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		hook.ServeHTTP(rec, req)
		if rec.status >= 400 && rec.status < 500 {
			r.record(func() {
				r.rejected = append(r.rejected, fmt.Sprintf("%d to a delivery with timestamp %q", rec.status, req.Header.Get(fax.HeaderTimestamp)))
			})
		}
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for webhooks on %s: %w", addr, err)
	}
	r.srv = httptest.NewUnstartedServer(mux)
	r.srv.Listener.Close()
	r.srv.Listener = ln
	r.srv.Start()
	r.url = r.srv.URL
	if publicURL != "" {
		u, err := url.Parse(strings.TrimRight(publicURL, "/"))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			r.srv.Close()
			return nil, fmt.Errorf("receiver URL %q is not an http(s) URL", publicURL)
		}
		r.url = u.String()
	}
	return r, nil
}

func (r *receiver) close() { r.srv.Close() }

func (r *receiver) record(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f()
	close(r.changed)
	r.changed = make(chan struct{})
}

// snapshot returns the deliveries so far and a channel closed at the next.
func (r *receiver) snapshot() ([]fax.Event, []string, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events), slices.Clone(r.rejected), r.changed
}

func (r *receiver) mediaURL() string   { return r.url + mediaPath }
func (r *receiver) webhookURL() string { return r.url + webhookPath }

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// samplePDF renders a Letter PDF of pages numbered pages.
func samplePDF(pages int) ([]byte, error) {
	type text struct {
		Value string `json:"value"`
		Pos   [2]int `json:"pos"`
		Font  struct {
			Name string `json:"name"`
			Size int    `json:"size"`
		} `json:"font"`
	}
	type page struct {
		Content struct {
			Text []text `json:"text"`
		} `json:"content"`
	}
	doc := struct {
		Paper  string          `json:"paper"`
		Origin string          `json:"origin"`
		Pages  map[string]page `json:"pages"`
	}{Paper: "LetterP", Origin: "UpperLeft", Pages: map[string]page{}}
	for i := 1; i <= pages; i++ {
		t := text{Value: fmt.Sprintf("apistack conformance fax, page %d of %d", i, pages), Pos: [2]int{72, 72}}
		t.Font.Name, t.Font.Size = "Helvetica", 14
		var p page
		p.Content.Text = []text{t}
		doc.Pages[fmt.Sprint(i)] = p
	}
	js, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("sample PDF: %w", err)
	}
	var out bytes.Buffer
	if err := api.Create(nil, bytes.NewReader(js), &out, nil); err != nil {
		return nil, fmt.Errorf("sample PDF: %w", err)
	}
	return out.Bytes(), nil
}

// authed sends a request with the API key.
func (f *faxChecker) authed(ctx context.Context, r request) (*response, error) {
	if r.header == nil {
		r.header = http.Header{}
	}
	r.header.Set("Authorization", "Bearer "+f.creds.APIKey)
	return f.x.send(ctx, r)
}

// expectFaxErrors checks an error answer: the status and a non-empty
// errors[] whose entries each have a code, a title and a detail.
func expectFaxErrors(op string, r *response, status int) (faxapi.Errors, error) {
	var e faxapi.Errors
	if r.status != status {
		return e, fmt.Errorf("%s: want %d, got %d: %s", op, status, r.status, snippet(r.body))
	}
	if err := r.decode(op, &e); err != nil {
		return e, err
	}
	if len(e.Errors) == 0 {
		return e, fmt.Errorf("%s: %d with an empty errors[]", op, status)
	}
	for i, x := range e.Errors {
		if x.Code == "" || x.Title == "" || x.Detail == "" {
			return e, fmt.Errorf("%s: errors[%d] lacks a code, title or detail: %+v", op, i, x)
		}
	}
	return e, nil
}

func (f *faxChecker) checkAuthentication(ctx context.Context) (string, error) {
	bad, err := f.x.send(ctx, request{op: "ListFaxes with a bad key", method: http.MethodGet, path: "/v2/faxes",
		header: header("Authorization", "Bearer conform-not-a-key")})
	if err != nil {
		return "", err
	}
	if _, err := expectFaxErrors("ListFaxes with a bad key", bad, http.StatusUnauthorized); err != nil {
		return "", err
	}
	none, err := f.x.send(ctx, request{op: "ListFaxes without a key", method: http.MethodGet, path: "/v2/faxes", badInput: true})
	if err != nil {
		return "", err
	}
	if _, err := expectFaxErrors("ListFaxes without a key", none, http.StatusUnauthorized); err != nil {
		return "", err
	}
	good, err := f.authed(ctx, request{op: "ListFaxes", method: http.MethodGet, path: "/v2/faxes"})
	if err != nil {
		return "", err
	}
	if err := good.expectStatus("ListFaxes with the key", http.StatusOK); err != nil {
		return "", err
	}
	return "bad key and no key: 401 with errors[]; the key: 200", nil
}

// send sends a fax form-encoded (as the service description shows).
func (f *faxChecker) send(ctx context.Context, form url.Values, badInput bool) (*response, error) {
	return f.authed(ctx, request{op: "SendFax", method: http.MethodPost, path: "/v2/faxes",
		header: header("Content-Type", "application/x-www-form-urlencoded"), body: []byte(form.Encode()), badInput: badInput})
}

func (f *faxChecker) sendForm(to string) url.Values {
	return url.Values{"connection_id": {f.creds.ConnectionID}, "from": {f.creds.From}, "to": {to}, "media_url": {f.receiver.mediaURL()}}
}

// sendFax sends a fax to to and returns it as answered.
func (f *faxChecker) sendFax(ctx context.Context, to string) (faxapi.Fax, error) {
	r, err := f.send(ctx, f.sendForm(to), false)
	if err != nil {
		return faxapi.Fax{}, err
	}
	if err := r.expectStatus("SendFax", http.StatusAccepted); err != nil {
		return faxapi.Fax{}, err
	}
	var sent faxapi.FaxResponse
	if err := r.decode("SendFax", &sent); err != nil {
		return faxapi.Fax{}, err
	}
	d := sent.Data
	switch {
	case d.Status != "queued":
		return d, fmt.Errorf("SendFax: status %q, want queued", d.Status)
	case d.To != to || d.From != f.creds.From || d.ConnectionId != f.creds.ConnectionID:
		return d, fmt.Errorf("SendFax: answered to %s from %s on %s, sent to %s from %s on %s", d.To, d.From, d.ConnectionId, to, f.creds.From, f.creds.ConnectionID)
	}
	return d, nil
}

func (f *faxChecker) getFax(ctx context.Context, id string) (faxapi.Fax, error) {
	r, err := f.authed(ctx, request{op: "GetFax", method: http.MethodGet, path: "/v2/faxes/" + url.PathEscape(id)})
	if err != nil {
		return faxapi.Fax{}, err
	}
	if err := r.expectStatus("GetFax", http.StatusOK); err != nil {
		return faxapi.Fax{}, err
	}
	var got faxapi.FaxResponse
	if err := r.decode("GetFax", &got); err != nil {
		return faxapi.Fax{}, err
	}
	if got.Data.Id.String() != id {
		return got.Data, fmt.Errorf("GetFax %s answered fax %s", id, got.Data.Id)
	}
	return got.Data, nil
}

func final(s faxapi.FaxStatus) bool { return s == "delivered" || s == "failed" }

// follow polls a fax until it reaches a final state and returns the states
// seen, in order, without repeats. It polls every 10ms after a change and
// backs off to 250ms while nothing changes, so a simulator stepping fast is
// followed closely and a sandbox stepping every second is not flooded.
func (f *faxChecker) follow(ctx context.Context, id string) (faxapi.Fax, []faxapi.FaxStatus, error) {
	const fastest, slowest = 10 * time.Millisecond, 250 * time.Millisecond
	var seen []faxapi.FaxStatus
	wait := fastest
	for {
		d, err := f.getFax(ctx, id)
		if err != nil {
			return d, seen, err
		}
		if len(seen) == 0 || seen[len(seen)-1] != d.Status {
			seen = append(seen, d.Status)
			wait = fastest
		} else {
			wait = min(wait*3/2, slowest)
		}
		if final(d.Status) {
			return d, seen, nil
		}
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return d, seen, fmt.Errorf("fax %s still %s when the check's time ran out (states seen %v): %w", id, d.Status, seen, ctx.Err())
		}
	}
}

// deleteFaxes waits for each fax to be final and deletes it (cleanup).
func (f *faxChecker) deleteFaxes(ids ...string) {
	ctx, cancel := cleanupContext()
	defer cancel()
	for _, id := range ids {
		if _, _, err := f.follow(ctx, id); err == nil {
			_, _ = f.authed(ctx, request{op: "DeleteFax", method: http.MethodDelete, path: "/v2/faxes/" + url.PathEscape(id)})
		}
	}
}

// inOrder reports whether seen follows the documented order of states; a
// fax may fail from any of them.
func inOrder(seen []faxapi.FaxStatus, order []faxapi.FaxStatus) bool {
	if n := len(seen); n > 0 && seen[n-1] == "failed" {
		seen = seen[:n-1]
	}
	i := 0
	for _, s := range seen {
		j := slices.Index(order[i:], s)
		if j < 0 {
			return false
		}
		i += j
	}
	return true
}

func (f *faxChecker) checkSendAndProgress(ctx context.Context) (string, error) {
	sent, err := f.sendFax(ctx, faxDelivered)
	if err != nil {
		return "", err
	}
	id := sent.Id.String()
	defer f.deleteFaxes(id)
	d, seen, err := f.follow(ctx, id)
	if err != nil {
		return "", err
	}
	if d.Status != "delivered" {
		reason := ""
		if d.FailureReason != nil {
			reason = string(*d.FailureReason)
		}
		if reason == "file_download_failed" {
			return "", fmt.Errorf("fax to %s failed with file_download_failed: the implementation could not fetch the runner's document at %s (can it reach this address? see --listen and --receiver-url)", faxDelivered, f.receiver.mediaURL())
		}
		return "", fmt.Errorf("fax to %s ended %s %s, want delivered", faxDelivered, d.Status, reason)
	}
	if !inOrder(append([]faxapi.FaxStatus{sent.Status}, seen...), outboundOrder) {
		return "", fmt.Errorf("GetFax: states %v are not in the documented order %v", seen, outboundOrder)
	}
	if d.PageCount == nil || *d.PageCount != samplePages {
		return "", fmt.Errorf("delivered fax: page_count %v, the document has %d pages", d.PageCount, samplePages)
	}
	found, err := f.listed(ctx, id)
	if err != nil {
		return "", err
	}
	if found.Status != "delivered" {
		return "", fmt.Errorf("ListFaxes shows the fax %s, GetFax shows delivered", found.Status)
	}
	return fmt.Sprintf("202 queued, then %v; %d pages; listed", seen, samplePages), nil
}

// listed finds a fax in the list, walking its pages.
func (f *faxChecker) listed(ctx context.Context, id string) (faxapi.Fax, error) {
	for page := 1; page <= 100; page++ {
		r, err := f.authed(ctx, request{op: "ListFaxes", method: http.MethodGet,
			path: "/v2/faxes?" + url.Values{"page[size]": {"250"}, "page[number]": {fmt.Sprint(page)}}.Encode()})
		if err != nil {
			return faxapi.Fax{}, err
		}
		if err := r.expectStatus("ListFaxes", http.StatusOK); err != nil {
			return faxapi.Fax{}, err
		}
		var list faxapi.FaxList
		if err := r.decode("ListFaxes", &list); err != nil {
			return faxapi.Fax{}, err
		}
		for _, d := range list.Data {
			if d.Id.String() == id {
				return d, nil
			}
		}
		if page >= list.Meta.TotalPages {
			break
		}
	}
	return faxapi.Fax{}, fmt.Errorf("ListFaxes: fax %s is not listed", id)
}

func (f *faxChecker) checkTestNumberOutcome(ctx context.Context) (string, error) {
	sent, err := f.sendFax(ctx, faxUserBusy)
	if err != nil {
		return "", err
	}
	id := sent.Id.String()
	defer f.deleteFaxes(id)
	d, seen, err := f.follow(ctx, id)
	if err != nil {
		return "", err
	}
	if d.Status != "failed" || d.FailureReason == nil || *d.FailureReason != "user_busy" {
		reason := "none"
		if d.FailureReason != nil {
			reason = string(*d.FailureReason)
		}
		return "", fmt.Errorf("fax to the test number %s ended %s (failure_reason %s, states %v), want failed with user_busy", faxUserBusy, d.Status, reason, seen)
	}
	if !inOrder(append([]faxapi.FaxStatus{sent.Status}, seen...), outboundOrder) {
		return "", fmt.Errorf("GetFax: states %v are not in the documented order %v", seen, outboundOrder)
	}
	return fmt.Sprintf("%s: %v, failure_reason user_busy", faxUserBusy, seen), nil
}

// listPage reads one page of faxes.
func (f *faxChecker) listPage(ctx context.Context, number, size int) (faxapi.FaxList, error) {
	var list faxapi.FaxList
	op := fmt.Sprintf("ListFaxes page[number]=%d page[size]=%d", number, size)
	r, err := f.authed(ctx, request{op: op, method: http.MethodGet,
		path: "/v2/faxes?" + url.Values{"page[size]": {fmt.Sprint(size)}, "page[number]": {fmt.Sprint(number)}}.Encode()})
	if err != nil {
		return list, err
	}
	if err := r.expectStatus(op, http.StatusOK); err != nil {
		return list, err
	}
	if err := r.decode(op, &list); err != nil {
		return list, err
	}
	if list.Meta.PageNumber != number || list.Meta.PageSize != size {
		return list, fmt.Errorf("%s: meta says page %d of size %d", op, list.Meta.PageNumber, list.Meta.PageSize)
	}
	if want := (list.Meta.TotalResults + size - 1) / size; list.Meta.TotalPages != want {
		return list, fmt.Errorf("%s: total_pages %d for %d results in pages of %d, want %d", op, list.Meta.TotalPages, list.Meta.TotalResults, size, want)
	}
	return list, nil
}

func (f *faxChecker) checkListMeta(ctx context.Context) (string, error) {
	var ids []string
	defer func() { f.deleteFaxes(ids...) }()
	for range 2 {
		d, err := f.sendFax(ctx, faxDelivered)
		if err != nil {
			return "", err
		}
		ids = append(ids, d.Id.String())
	}
	first, err := f.listPage(ctx, 1, 1)
	if err != nil {
		return "", err
	}
	if first.Meta.TotalResults < 2 {
		return "", fmt.Errorf("ListFaxes: total_results %d after sending 2 faxes", first.Meta.TotalResults)
	}
	second, err := f.listPage(ctx, 2, 1)
	if err != nil {
		return "", err
	}
	if len(first.Data) != 1 || len(second.Data) != 1 {
		return "", fmt.Errorf("ListFaxes page[size]=1: pages 1 and 2 hold %d and %d faxes", len(first.Data), len(second.Data))
	}
	if first.Data[0].Id == second.Data[0].Id {
		return "", fmt.Errorf("ListFaxes page[size]=1: pages 1 and 2 both hold fax %s", first.Data[0].Id)
	}
	beyond, err := f.listPage(ctx, first.Meta.TotalPages+1, 1)
	if err != nil {
		return "", err
	}
	if len(beyond.Data) != 0 {
		return "", fmt.Errorf("ListFaxes: page %d of %d holds %d faxes", first.Meta.TotalPages+1, first.Meta.TotalPages, len(beyond.Data))
	}
	return fmt.Sprintf("page[size]=1: %d results in %d pages, pages 1 and 2 differ, page %d empty", first.Meta.TotalResults, first.Meta.TotalPages, first.Meta.TotalPages+1), nil
}

func (f *faxChecker) checkValidation(ctx context.Context) (string, error) {
	before, err := f.listPage(ctx, 1, 1)
	if err != nil {
		return "", err
	}
	cases := []struct {
		name    string
		edit    func(url.Values)
		pointer string
	}{
		{"to not E.164", func(v url.Values) { v.Set("to", "12345") }, "/to"},
		{"from not E.164", func(v url.Values) { v.Set("from", "not-a-number") }, "/from"},
		{"media_url missing", func(v url.Values) { v.Del("media_url") }, "/media_url"},
		{"media_url not http(s)", func(v url.Values) { v.Set("media_url", "ftp://example.com/doc.pdf") }, "/media_url"},
	}
	for _, c := range cases {
		form := f.sendForm(faxDelivered)
		c.edit(form)
		op := "SendFax with " + c.name
		r, err := f.send(ctx, form, true)
		if err != nil {
			return "", err
		}
		e, err := expectFaxErrors(op, r, http.StatusUnprocessableEntity)
		if err != nil {
			return "", err
		}
		if !slices.ContainsFunc(e.Errors, func(x faxapi.Error) bool {
			return x.Source != nil && x.Source.Pointer != nil && *x.Source.Pointer == c.pointer
		}) {
			return "", fmt.Errorf("%s: 422, but no error has source.pointer %q: %s", op, c.pointer, snippet(r.body))
		}
	}
	after, err := f.listPage(ctx, 1, 1)
	if err != nil {
		return "", err
	}
	if after.Meta.TotalResults != before.Meta.TotalResults {
		return "", fmt.Errorf("refused sends changed the list: %d faxes before, %d after", before.Meta.TotalResults, after.Meta.TotalResults)
	}
	return fmt.Sprintf("%d bad sends: 422 with source.pointer naming the field; nothing queued", len(cases)), nil
}

func (f *faxChecker) application(ctx context.Context, op, method, path string, body any, want int) (faxapi.FaxApplication, *response, error) {
	r := request{op: op, method: method, path: path}
	if body != nil {
		r.body, r.header = jsonBody(body), header("Content-Type", "application/json")
	}
	resp, err := f.authed(ctx, r)
	if err != nil {
		return faxapi.FaxApplication{}, nil, err
	}
	if err := resp.expectStatus(op, want); err != nil {
		return faxapi.FaxApplication{}, resp, err
	}
	var app faxapi.FaxApplicationResponse
	if want != http.StatusNoContent {
		if err := resp.decode(op, &app); err != nil {
			return app.Data, resp, err
		}
	}
	return app.Data, resp, nil
}

func (f *faxChecker) checkApplicationLifecycle(ctx context.Context) (string, error) {
	name := uniqueName("conform-app-")
	hook := f.receiver.webhookURL()
	created, _, err := f.application(ctx, "CreateFaxApplication", http.MethodPost, "/v2/fax_applications",
		faxapi.CreateFaxApplicationRequest{ApplicationName: name, WebhookUrl: hook}, http.StatusCreated)
	if err != nil {
		return "", err
	}
	path := "/v2/fax_applications/" + url.PathEscape(created.Id)
	deleted := false
	defer func() {
		if !deleted {
			ctx, cancel := cleanupContext()
			defer cancel()
			_, _ = f.authed(ctx, request{op: "DeleteFaxApplication", method: http.MethodDelete, path: path})
		}
	}()
	if created.ApplicationName != name || created.WebhookUrl != hook || created.Id == "" {
		return "", fmt.Errorf("CreateFaxApplication answered %+v for name %s and webhook_url %s", created, name, hook)
	}
	got, _, err := f.application(ctx, "GetFaxApplication", http.MethodGet, path, nil, http.StatusOK)
	if err != nil {
		return "", err
	}
	if got.Id != created.Id || got.WebhookUrl != hook || got.ApplicationName != name {
		return "", fmt.Errorf("GetFaxApplication read back %+v, created %+v", got, created)
	}
	renamed := name + "-renamed"
	patched, _, err := f.application(ctx, "UpdateFaxApplication", http.MethodPatch, path,
		faxapi.UpdateFaxApplicationRequest{ApplicationName: &renamed}, http.StatusOK)
	if err != nil {
		return "", err
	}
	if patched.ApplicationName != renamed || patched.WebhookUrl != hook {
		return "", fmt.Errorf("UpdateFaxApplication of the name only answered %+v", patched)
	}
	if got, _, err = f.application(ctx, "GetFaxApplication after the update", http.MethodGet, path, nil, http.StatusOK); err != nil {
		return "", err
	}
	if got.ApplicationName != renamed {
		return "", fmt.Errorf("GetFaxApplication after the update: name %q, want %q", got.ApplicationName, renamed)
	}
	if _, _, err := f.application(ctx, "DeleteFaxApplication", http.MethodDelete, path, nil, http.StatusNoContent); err != nil {
		return "", err
	}
	deleted = true
	r, err := f.authed(ctx, request{op: "GetFaxApplication after the delete", method: http.MethodGet, path: path})
	if err != nil {
		return "", err
	}
	if _, err := expectFaxErrors("GetFaxApplication after the delete", r, http.StatusNotFound); err != nil {
		return "", err
	}
	return "create 201, read back, PATCH of one field 200 keeps the others, delete 204, then 404", nil
}

func (f *faxChecker) checkWebhooks(ctx context.Context) (string, error) {
	path := "/v2/fax_applications/" + url.PathEscape(f.creds.ConnectionID)
	app, _, err := f.application(ctx, "GetFaxApplication", http.MethodGet, path, nil, http.StatusOK)
	if err != nil {
		return "", err
	}
	hook := f.receiver.webhookURL()
	if _, _, err := f.application(ctx, "UpdateFaxApplication", http.MethodPatch, path,
		faxapi.UpdateFaxApplicationRequest{WebhookUrl: &hook}, http.StatusOK); err != nil {
		return "", err
	}
	defer func() {
		ctx, cancel := cleanupContext()
		defer cancel()
		restore := app.WebhookUrl
		_, _ = f.authed(ctx, request{op: "UpdateFaxApplication", method: http.MethodPatch, path: path,
			header: header("Content-Type", "application/json"), body: jsonBody(faxapi.UpdateFaxApplicationRequest{WebhookUrl: &restore})})
	}()
	sent, err := f.sendFax(ctx, faxDelivered)
	if err != nil {
		return "", err
	}
	id := sent.Id.String()
	defer f.deleteFaxes(id)

	var types []string
	for {
		events, rejected, changed := f.receiver.snapshot()
		if len(rejected) > 0 {
			return "", fmt.Errorf("the receiver refused deliveries (bad or missing Ed25519 signature, stale timestamp or malformed event): %s", strings.Join(rejected, "; "))
		}
		types = eventTypes(events, id)
		if len(types) > 0 && (types[len(types)-1] == "fax.delivered" || types[len(types)-1] == "fax.failed") {
			break
		}
		select {
		case <-changed:
		case <-ctx.Done():
			if len(events) == 0 {
				return "", fmt.Errorf("no webhook delivery reached the receiver at %s (can the implementation reach this address? see --listen and --receiver-url): %w", hook, ctx.Err())
			}
			return "", fmt.Errorf("events of fax %s so far %v, no final event: %w", id, types, ctx.Err())
		}
	}
	if !slices.Equal(types, deliveredEvents) {
		return "", fmt.Errorf("events of fax %s arrived as %v, want %v", id, types, deliveredEvents)
	}
	return fmt.Sprintf("%d deliveries, each Ed25519-signed with the webhook_public_key, in order %v", len(types), types), nil
}

// eventTypes lists the types of the fax's events in arrival order, each
// event once (a redelivery repeats its ID).
func eventTypes(events []fax.Event, faxID string) []string {
	var types []string
	seen := map[string]bool{}
	for _, e := range events {
		if e.FaxID != faxID || seen[e.ID] {
			continue
		}
		seen[e.ID] = true
		types = append(types, e.Type)
	}
	return types
}
