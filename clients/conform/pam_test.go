package conform

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"

	"github.com/apistack/apistack/gen/pamapi"
)

// fakePAM is a small in-memory PAM implementation with switchable defects,
// to show that each check notices the defect it is about.
type fakePAM struct {
	mu     sync.Mutex
	groups map[string]*pamapi.Group
	calls  int64
	// Defects.
	tokenWithoutExpiry bool // a 200 that breaks the spec
	linksDropCount     bool // next links lose count
	hardDelete         bool // DELETE removes the group
}

func (f *fakePAM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	now := time.Now().Unix()
	w.Header().Set("X-RateLimit-Limit", "1000")
	w.Header().Set("X-RateLimit-Remaining", strconv.FormatInt(1000-f.calls, 10))
	w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(now+f.calls, 10))
	w.Header().Set("X-RateLimit-Retry-At", strconv.FormatInt(now, 10))
	reply := func(status int, v any) {
		if v == nil {
			w.WriteHeader(status)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	fail := func(status int, name pamapi.ErrorName, cause ...pamapi.ErrorCause) {
		if cause == nil {
			cause = []pamapi.ErrorCause{}
		}
		reply(status, pamapi.Error{Code: status, Error: name, Message: string(name), ErrorCause: cause})
	}
	const prefix = "/v1/teams/demo"
	path := strings.TrimPrefix(r.URL.Path, prefix)
	if path == "/service_token" {
		var req pamapi.ServiceTokenRequest
		if json.NewDecoder(r.Body).Decode(&req) != nil || req.KeyId != "key" || req.KeySecret != "secret" {
			fail(http.StatusUnauthorized, pamapi.ErrorNameAuthenticationError)
			return
		}
		if f.tokenWithoutExpiry {
			reply(http.StatusOK, map[string]string{"bearer_token": "tok", "team_name": "demo"})
			return
		}
		reply(http.StatusOK, pamapi.ServiceToken{BearerToken: "tok", TeamName: "demo", ExpiresAt: time.Now().Add(time.Hour)})
		return
	}
	if r.Header.Get("Authorization") != "Bearer tok" {
		fail(http.StatusUnauthorized, pamapi.ErrorNameAuthenticationError)
		return
	}
	switch {
	case path == "/groups" && r.Method == http.MethodPost:
		var req pamapi.CreateGroupRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		if g, ok := f.groups[req.Name]; ok && g.DeletedAt == nil {
			fail(http.StatusConflict, pamapi.ErrorNameResourceAlreadyExists)
			return
		}
		g := &pamapi.Group{Id: uuid.New(), Name: req.Name, Roles: req.Roles}
		f.groups[req.Name] = g
		reply(http.StatusCreated, g)
	case path == "/groups":
		q := r.URL.Query()
		count := 100
		if q.Has("count") {
			n, err := strconv.Atoi(q.Get("count"))
			if err != nil || n < 1 || n > 1000 {
				fail(http.StatusBadRequest, pamapi.ErrorNameInvalidRequest, pamapi.ErrorCause{Error: "bad", LocationType: "query", Location: "count"})
				return
			}
			count = n
		}
		var names []string
		for n, g := range f.groups {
			if strings.Contains(n, q.Get("contains")) && (g.DeletedAt == nil || q.Get("include_deleted") == "true") {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		offset, _ := strconv.Atoi(q.Get("offset"))
		end := min(offset+count, len(names))
		list := pamapi.GroupList{List: []pamapi.Group{}}
		for _, n := range names[offset:end] {
			list.List = append(list.List, *f.groups[n])
		}
		link := func(off int, rel string) string {
			v := url.Values{"offset": {strconv.Itoa(off)}, "count": {strconv.Itoa(count)}, "contains": {q.Get("contains")}}
			if f.linksDropCount && rel == "next" {
				v.Del("count")
			}
			return fmt.Sprintf(`<%s%s/groups?%s>; rel="%s"`, "http://"+r.Host, prefix, v.Encode(), rel)
		}
		var links []string
		if end < len(names) {
			links = append(links, link(end, "next"))
		}
		if offset > 0 {
			links = append(links, link(max(0, offset-count), "prev"))
		}
		if links != nil {
			w.Header().Set("Link", strings.Join(links, ", "))
		}
		reply(http.StatusOK, list)
	case strings.HasPrefix(path, "/groups/"):
		g, ok := f.groups[strings.TrimPrefix(path, "/groups/")]
		if !ok {
			fail(http.StatusNotFound, pamapi.ErrorNameResourceDoesNotExist)
			return
		}
		switch r.Method {
		case http.MethodGet:
			reply(http.StatusOK, g)
		case http.MethodPut:
			var req pamapi.UpdateGroupRequest
			_ = json.NewDecoder(r.Body).Decode(&req)
			g.Roles = req.Roles
			reply(http.StatusNoContent, nil)
		case http.MethodDelete:
			if f.hardDelete {
				delete(f.groups, g.Name)
			} else {
				now := time.Now().UTC()
				g.DeletedAt = &now
			}
			reply(http.StatusNoContent, nil)
		}
	case path == "/current_user":
		reply(http.StatusOK, map[string]any{"id": uuid.New(), "name": "bot", "kind": "service", "status": "active",
			"created_at": time.Now().UTC(), "team_name": "demo", "roles": []string{"pam_admin"}})
	default:
		fail(http.StatusNotFound, pamapi.ErrorNameResourceDoesNotExist)
	}
}

// runFakePAM runs the PAM suite against a fakePAM and returns each check's result.
func runFakePAM(t *testing.T, f *fakePAM) map[string]Result {
	t.Helper()
	f.groups = map[string]*pamapi.Group{}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	r := Run(context.Background(), Config{API: PAM, Timeout: 10 * time.Second, Credentials: Credentials{PAM: &PAMCredentials{
		BaseURL: srv.URL, Team: "demo", KeyID: "key", KeySecret: "secret"}}})
	out := map[string]Result{}
	for _, res := range r.Results {
		out[res.Check] = res
	}
	return out
}

func TestPAMSuite_EachDefectFailsTheCheckAboutIt(t *testing.T) {
	tests := []struct {
		name   string
		fake   *fakePAM
		check  string
		detail []string
	}{
		{"a response that breaks the spec names the operation and the rule", &fakePAM{tokenWithoutExpiry: true}, "token-exchange",
			[]string{"IssueServiceToken (POST /v1/teams/demo/service_token)", "contract: response 200", "expires_at"}},
		{"links that drop count", &fakePAM{linksDropCount: true}, "pagination-walk",
			[]string{`the rel="next" link`, "does not carry count=2"}},
		{"a hard delete", &fakePAM{hardDelete: true}, "group-lifecycle",
			[]string{"GetGroup of the deleted group (soft delete): want 200, got 404"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			results := runFakePAM(t, tt.fake)
			res := results[tt.check]
			assert.False(t, res.Passed, "%s passed against a defective implementation", tt.check)
			for _, d := range tt.detail {
				assert.Contains(t, res.Detail, d)
			}
		})
	}
}

func TestPAMSuite_ACorrectFakePassesEveryCheck(t *testing.T) {
	// The fake has no roles or rate limit worth the name, but nothing the
	// suite checks is wrong in it: the checks pass without apistack.
	for name, res := range runFakePAM(t, &fakePAM{}) {
		assert.True(t, res.Passed, "%s: %s", name, res.Detail)
	}
}
