// Package harproxytest is a PAM service for tests of apistack proxy and
// apistack drift that departs from the PAM spec in known ways.
package harproxytest

import (
	"io"
	"net/http"
	"sync"
)

// GroupID is the id of the group the deviating service answers.
const GroupID = "0d1c3a52-8a57-4a39-9ad3-2f4f1f3c5a10"

// Received is a request the service was sent.
type Received struct {
	Method, URI string
	Header      http.Header
	Body        []byte
}

// Calls are the requests the tests send, in order: method, path and
// query, JSON body ("" for none). The service answers each as commented.
var Calls = [][3]string{
	// Keeps to the spec.
	{"POST", "/v1/teams/demo/service_token", `{"key_id":"k1","key_secret":"s3cret-value"}`},
	// roles of the wrong type, an undeclared member, no X-RateLimit-Limit.
	{"GET", "/v1/teams/demo/groups?count=5", ""},
	// Keeps to the spec (the group serve --demo has).
	{"GET", "/v1/teams/demo/groups/demo-admins", ""},
	// A status the spec does not declare (418).
	{"GET", "/v1/teams/demo/groups/teapot", ""},
	// A request without the required name, accepted (201).
	{"POST", "/v1/teams/demo/groups", `{"roles": ["end_user"]}`},
}

// DeviatingPAM is a PAM service that departs from the spec as Calls says.
// It keeps what it was sent and answered.
type DeviatingPAM struct {
	mu   sync.Mutex
	got  []Received
	sent [][]byte
}

// RateHeaders sets the X-RateLimit-* headers on h (Limit only when limit).
func RateHeaders(h http.Header, limit bool) {
	if limit {
		h.Set("X-RateLimit-Limit", "10000")
	}
	h.Set("X-RateLimit-Remaining", "9999")
	h.Set("X-RateLimit-Reset", "1767225600")
	h.Set("X-RateLimit-Retry-At", "1767225600")
}

// Exchange is the i-th request received and the body answered to it.
func (d *DeviatingPAM) Exchange(i int) (Received, []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.got[i], d.sent[i]
}

// ServeHTTP answers as Calls says.
func (d *DeviatingPAM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	d.mu.Lock()
	d.got = append(d.got, Received{Method: r.Method, URI: r.RequestURI, Header: r.Header.Clone(), Body: body})
	d.mu.Unlock()
	answer := func(status int, doc string, limit bool) {
		RateHeaders(w.Header(), limit)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		d.mu.Lock()
		d.sent = append(d.sent, []byte(doc))
		d.mu.Unlock()
		_, _ = io.WriteString(w, doc)
	}
	switch r.Method + " " + r.URL.Path {
	case "POST /v1/teams/demo/service_token":
		answer(200, `{"bearer_token":"pat_upstream","expires_at":"2030-01-01T00:00:00Z","team_name":"demo"}`, true)
	case "GET /v1/teams/demo/groups":
		answer(200, `{"list":[{"id":"`+GroupID+`","name":"demo-admins","roles":"pam_admin","deleted_at":null,"colour":"blue"}]}`, false)
	case "GET /v1/teams/demo/groups/demo-admins":
		answer(200, `{"id":"`+GroupID+`","name":"demo-admins","roles":["pam_admin"],"deleted_at":null}`, true)
	case "GET /v1/teams/demo/groups/teapot":
		answer(http.StatusTeapot, `{"code":418,"error":"teapot","message":"short and stout"}`, true)
	case "POST /v1/teams/demo/groups":
		answer(201, `{"id":"`+GroupID+`","name":"unnamed","roles":["end_user"],"deleted_at":null}`, true)
	default:
		answer(404, `{"code":404,"error":"resource_not_found","message":"no such thing"}`, true)
	}
}
