package conform

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apistack/apistack/clients/internal/linkheader"
	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/protocol/contract"
)

// pamChecker holds what the PAM checks share.
type pamChecker struct {
	x     *exchange
	creds PAMCredentials
}

func pamSuite(cfg Config) ([]check, func(), error) {
	if cfg.Credentials.PAM == nil {
		return nil, nil, errors.New("the credentials have no pam section")
	}
	creds := *cfg.Credentials.PAM
	if cfg.BaseURL != "" {
		creds.BaseURL = cfg.BaseURL
	}
	if creds.Team == "" || creds.KeyID == "" || creds.KeySecret == "" {
		return nil, nil, errors.New("the pam section needs team, key_id and key_secret")
	}
	x, err := newExchange(contract.PAM, creds.BaseURL, cfg.Transport)
	if err != nil {
		return nil, nil, fmt.Errorf("pam: %w", err)
	}
	p := &pamChecker{x: x, creds: creds}
	return []check{
		{"token-exchange", p.checkTokenExchange},
		{"authentication-required", p.checkAuthenticationRequired},
		{"rate-limit-headers", p.checkRateLimitHeaders},
		{"group-lifecycle", p.checkGroupLifecycle},
		{"pagination-walk", p.checkPaginationWalk},
		{"error-not-found", p.checkNotFound},
		{"error-already-exists", p.checkAlreadyExists},
		{"error-invalid-count", p.checkInvalidCount},
	}, func() {}, nil
}

func (p *pamChecker) teamPath(rest string) string {
	return "/v1/teams/" + url.PathEscape(p.creds.Team) + rest
}

// issueToken exchanges a key for a token.
func (p *pamChecker) issueToken(ctx context.Context, secret string) (*response, error) {
	return p.x.send(ctx, request{op: "IssueServiceToken", method: http.MethodPost, path: p.teamPath("/service_token"),
		header: header("Content-Type", "application/json"),
		body:   jsonBody(pamapi.ServiceTokenRequest{KeyId: p.creds.KeyID, KeySecret: secret})})
}

// token returns a bearer token of the credentials' key.
func (p *pamChecker) token(ctx context.Context) (string, error) {
	resp, err := p.issueToken(ctx, p.creds.KeySecret)
	if err != nil {
		return "", err
	}
	if err := resp.expectStatus("IssueServiceToken", http.StatusOK); err != nil {
		return "", err
	}
	var tok pamapi.ServiceToken
	if err := resp.decode("IssueServiceToken", &tok); err != nil {
		return "", err
	}
	if tok.BearerToken == "" {
		return "", errors.New("IssueServiceToken: empty bearer_token")
	}
	return tok.BearerToken, nil
}

// authed sends an authenticated request.
func (p *pamChecker) authed(ctx context.Context, token string, r request) (*response, error) {
	if r.header == nil {
		r.header = http.Header{}
	}
	r.header.Set("Authorization", "Bearer "+token)
	if r.body != nil {
		r.header.Set("Content-Type", "application/json")
	}
	return p.x.send(ctx, r)
}

// expectError checks an error answer: the status, the documented body
// {code, error, message, error_cause} with code equal to the status and the
// error name wanted.
func expectPAMError(op string, r *response, status int, name pamapi.ErrorName) (pamapi.Error, error) {
	var e pamapi.Error
	if r.status != status {
		return e, fmt.Errorf("%s: want %d %s, got %d: %s", op, status, name, r.status, snippet(r.body))
	}
	if err := r.decode(op, &e); err != nil {
		return e, err
	}
	switch {
	case e.Error != name:
		return e, fmt.Errorf("%s: want error %q, got %q (%s)", op, name, e.Error, e.Message)
	case e.Code != status:
		return e, fmt.Errorf("%s: body code %d differs from the status %d", op, e.Code, status)
	case strings.TrimSpace(e.Message) == "":
		return e, fmt.Errorf("%s: %s without a message", op, name)
	}
	return e, nil
}

func (p *pamChecker) checkTokenExchange(ctx context.Context) (string, error) {
	resp, err := p.issueToken(ctx, p.creds.KeySecret)
	if err != nil {
		return "", err
	}
	if err := resp.expectStatus("IssueServiceToken", http.StatusOK); err != nil {
		return "", err
	}
	var tok pamapi.ServiceToken
	if err := resp.decode("IssueServiceToken", &tok); err != nil {
		return "", err
	}
	switch {
	case tok.BearerToken == "":
		return "", errors.New("IssueServiceToken: 200 with an empty bearer_token")
	case tok.TeamName != p.creds.Team:
		return "", fmt.Errorf("IssueServiceToken: team_name %q, want %q", tok.TeamName, p.creds.Team)
	case !tok.ExpiresAt.After(serverNow(resp)):
		return "", fmt.Errorf("IssueServiceToken: the token expires at %s, before the answer's date %s", tok.ExpiresAt, serverNow(resp))
	}
	// The token works.
	me, err := p.authed(ctx, tok.BearerToken, request{op: "GetCurrentUser", method: http.MethodGet, path: p.teamPath("/current_user")})
	if err != nil {
		return "", err
	}
	if err := me.expectStatus("GetCurrentUser with the issued token", http.StatusOK); err != nil {
		return "", err
	}

	wrong, err := p.issueToken(ctx, p.creds.KeySecret+"x")
	if err != nil {
		return "", err
	}
	if _, err := expectPAMError("IssueServiceToken with a wrong secret", wrong, http.StatusUnauthorized, pamapi.ErrorNameAuthenticationError); err != nil {
		return "", err
	}
	return "valid key: 200 with a working bearer token; wrong secret: 401 authentication_error", nil
}

func (p *pamChecker) checkAuthenticationRequired(ctx context.Context) (string, error) {
	none, err := p.x.send(ctx, request{op: "ListGroups without a token", method: http.MethodGet, path: p.teamPath("/groups"), badInput: true})
	if err != nil {
		return "", err
	}
	if _, err := expectPAMError("ListGroups without a token", none, http.StatusUnauthorized, pamapi.ErrorNameAuthenticationError); err != nil {
		return "", err
	}
	bad, err := p.authed(ctx, "conform-not-a-token", request{op: "ListGroups with a bad token", method: http.MethodGet, path: p.teamPath("/groups")})
	if err != nil {
		return "", err
	}
	if _, err := expectPAMError("ListGroups with a bad token", bad, http.StatusUnauthorized, pamapi.ErrorNameAuthenticationError); err != nil {
		return "", err
	}
	return "no token and a bad token: 401 authentication_error", nil
}

// rateLimit is the four X-RateLimit-* headers of one answer.
type rateLimit struct {
	limit, remaining, reset, retryAt int64
}

func readRateLimit(op string, r *response) (rateLimit, error) {
	var rl rateLimit
	for _, h := range []struct {
		name string
		v    *int64
	}{{"X-RateLimit-Limit", &rl.limit}, {"X-RateLimit-Remaining", &rl.remaining}, {"X-RateLimit-Reset", &rl.reset}, {"X-RateLimit-Retry-At", &rl.retryAt}} {
		s := r.header.Get(h.name)
		if s == "" {
			return rl, fmt.Errorf("%s: answer %d has no %s", op, r.status, h.name)
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return rl, fmt.Errorf("%s: %s %q is not an integer", op, h.name, s)
		}
		*h.v = n
	}
	now := serverNow(r).Unix()
	switch {
	case rl.limit <= 0:
		return rl, fmt.Errorf("%s: X-RateLimit-Limit %d allows nothing", op, rl.limit)
	case rl.remaining < 0 || rl.remaining > rl.limit:
		return rl, fmt.Errorf("%s: X-RateLimit-Remaining %d is not between 0 and the limit %d", op, rl.remaining, rl.limit)
	case rl.retryAt > rl.reset:
		return rl, fmt.Errorf("%s: X-RateLimit-Retry-At %d is after X-RateLimit-Reset %d", op, rl.retryAt, rl.reset)
	case rl.remaining > 0 && rl.retryAt > now+1:
		return rl, fmt.Errorf("%s: %d requests remain but X-RateLimit-Retry-At %d is in the future (now %d)", op, rl.remaining, rl.retryAt, now)
	case rl.remaining < rl.limit && rl.reset < now:
		return rl, fmt.Errorf("%s: the allowance is not full (%d of %d) but X-RateLimit-Reset %d is past (now %d)", op, rl.remaining, rl.limit, rl.reset, now)
	}
	return rl, nil
}

// serverNow is the answer's Date, or the local clock without one.
func serverNow(r *response) time.Time {
	if t, err := http.ParseTime(r.header.Get("Date")); err == nil {
		return t
	}
	return time.Now()
}

func (p *pamChecker) checkRateLimitHeaders(ctx context.Context) (string, error) {
	tok, err := p.token(ctx)
	if err != nil {
		return "", err
	}
	// Remaining counts whole requests while the bucket refills continuously,
	// so one request may leave it unchanged; five in a row lower it.
	const calls = 5
	var seen []rateLimit
	for i := range calls {
		r, err := p.authed(ctx, tok, request{op: "GetCurrentUser", method: http.MethodGet, path: p.teamPath("/current_user")})
		if err != nil {
			return "", err
		}
		if err := r.expectStatus("GetCurrentUser", http.StatusOK); err != nil {
			return "", err
		}
		rl, err := readRateLimit(fmt.Sprintf("GetCurrentUser #%d", i+1), r)
		if err != nil {
			return "", err
		}
		if len(seen) > 0 && rl.limit != seen[0].limit {
			return "", fmt.Errorf("X-RateLimit-Limit changed from %d to %d between two requests", seen[0].limit, rl.limit)
		}
		seen = append(seen, rl)
	}
	var remaining []int64
	for _, rl := range seen {
		remaining = append(remaining, rl.remaining)
	}
	if remaining[calls-1] >= remaining[0] {
		return "", fmt.Errorf("X-RateLimit-Remaining did not decrease over %d requests: %v", calls, remaining)
	}
	// Errors carry them too.
	missing, err := p.authed(ctx, tok, request{op: "GetGroup of a missing group", method: http.MethodGet, path: p.teamPath("/groups/" + uniqueName("conform-missing-"))})
	if err != nil {
		return "", err
	}
	if _, err := readRateLimit("GetGroup of a missing group", missing); err != nil {
		return "", err
	}
	unauth, err := p.authed(ctx, "conform-not-a-token", request{op: "GetCurrentUser with a bad token", method: http.MethodGet, path: p.teamPath("/current_user")})
	if err != nil {
		return "", err
	}
	if _, err := readRateLimit("GetCurrentUser with a bad token", unauth); err != nil {
		return "", err
	}
	return fmt.Sprintf("limit %d, remaining %v over %d requests; present and consistent on 200, 404 and 401", seen[0].limit, remaining, calls), nil
}

// group reads one group.
func (p *pamChecker) getGroup(ctx context.Context, tok, name string) (*response, pamapi.Group, error) {
	var g pamapi.Group
	r, err := p.authed(ctx, tok, request{op: "GetGroup", method: http.MethodGet, path: p.teamPath("/groups/" + url.PathEscape(name))})
	if err != nil {
		return nil, g, err
	}
	if r.status == http.StatusOK {
		err = r.decode("GetGroup", &g)
	}
	return r, g, err
}

func (p *pamChecker) createGroup(ctx context.Context, tok, name string, roles ...pamapi.Role) (*response, error) {
	if roles == nil {
		roles = []pamapi.Role{}
	}
	return p.authed(ctx, tok, request{op: "CreateGroup", method: http.MethodPost, path: p.teamPath("/groups"),
		body: jsonBody(pamapi.CreateGroupRequest{Name: name, Roles: roles})})
}

// deleteGroups soft-deletes what a check created, in a context of its own.
func (p *pamChecker) deleteGroups(tok string, names ...string) {
	ctx, cancel := cleanupContext()
	defer cancel()
	for _, n := range names {
		_, _ = p.authed(ctx, tok, request{op: "DeleteGroup", method: http.MethodDelete, path: p.teamPath("/groups/" + url.PathEscape(n))})
	}
}

// listAll walks ListGroups from query to the end, following rel="next".
func (p *pamChecker) listAll(ctx context.Context, tok string, query url.Values) ([]pamapi.Group, error) {
	var all []pamapi.Group
	next := p.teamPath("/groups?" + query.Encode())
	for page := 0; next != ""; page++ {
		if page > 1000 {
			return nil, errors.New("ListGroups: more than 1000 pages: the links loop")
		}
		r, err := p.authed(ctx, tok, request{op: "ListGroups", method: http.MethodGet, path: next})
		if err != nil {
			return nil, err
		}
		if err := r.expectStatus("ListGroups", http.StatusOK); err != nil {
			return nil, err
		}
		var list pamapi.GroupList
		if err := r.decode("ListGroups", &list); err != nil {
			return nil, err
		}
		all = append(all, list.List...)
		links, err := pageLinks(r)
		if err != nil {
			return nil, err
		}
		next = links["next"]
	}
	return all, nil
}

// pageLinks parses the Link header into rel -> absolute URL.
func pageLinks(r *response) (map[string]string, error) {
	out := map[string]string{}
	values := r.header.Values("Link")
	if len(values) == 0 {
		return out, nil
	}
	links, err := linkheader.Parse(values...)
	if err != nil {
		return nil, fmt.Errorf("ListGroups: Link header %q: %w", strings.Join(values, ", "), err)
	}
	for _, rel := range []string{"next", "prev"} {
		if l, ok := linkheader.Find(links, rel); ok {
			u, err := url.Parse(l.URI)
			if err != nil || (!u.IsAbs() && !strings.HasPrefix(l.URI, "/")) {
				return nil, fmt.Errorf("ListGroups: rel=%q target %q is not a URL", rel, l.URI)
			}
			out[rel] = l.URI
		}
	}
	return out, nil
}

func groupNames(gs []pamapi.Group) []string {
	names := make([]string, len(gs))
	for i, g := range gs {
		names[i] = g.Name
	}
	return names
}

func (p *pamChecker) checkGroupLifecycle(ctx context.Context) (string, error) {
	tok, err := p.token(ctx)
	if err != nil {
		return "", err
	}
	name := uniqueName("conform-state-")
	created, err := p.createGroup(ctx, tok, name, pamapi.RoleSecurityAdmin)
	if err != nil {
		return "", err
	}
	defer p.deleteGroups(tok, name)
	if err := created.expectStatus("CreateGroup", http.StatusCreated); err != nil {
		return "", err
	}
	var c pamapi.Group
	if err := created.decode("CreateGroup", &c); err != nil {
		return "", err
	}
	if c.Name != name || !slices.Equal(c.Roles, []pamapi.Role{pamapi.RoleSecurityAdmin}) || c.DeletedAt != nil {
		return "", fmt.Errorf("CreateGroup: answered %+v, not the group created (%s, [security_admin], live)", c, name)
	}

	r, g, err := p.getGroup(ctx, tok, name)
	if err != nil {
		return "", err
	}
	if err := r.expectStatus("GetGroup of the created group", http.StatusOK); err != nil {
		return "", err
	}
	if g.Id != c.Id || g.Name != name {
		return "", fmt.Errorf("GetGroup: read back %s (%s), created %s (%s)", g.Name, g.Id, name, c.Id)
	}
	listed, err := p.listAll(ctx, tok, url.Values{"contains": {name}})
	if err != nil {
		return "", err
	}
	if !slices.Contains(groupNames(listed), name) {
		return "", fmt.Errorf("ListGroups: the created group %s is not listed (listed %v)", name, groupNames(listed))
	}

	upd, err := p.authed(ctx, tok, request{op: "UpdateGroup", method: http.MethodPut, path: p.teamPath("/groups/" + name),
		body: jsonBody(pamapi.UpdateGroupRequest{Roles: []pamapi.Role{pamapi.RoleResourceAdmin}})})
	if err != nil {
		return "", err
	}
	if err := upd.expectStatus("UpdateGroup", http.StatusNoContent); err != nil {
		return "", err
	}
	if r, g, err = p.getGroup(ctx, tok, name); err != nil {
		return "", err
	}
	if err := r.expectStatus("GetGroup after the update", http.StatusOK); err != nil {
		return "", err
	}
	if !slices.Equal(g.Roles, []pamapi.Role{pamapi.RoleResourceAdmin}) {
		return "", fmt.Errorf("GetGroup after UpdateGroup: roles %v, want [resource_admin]", g.Roles)
	}

	del, err := p.authed(ctx, tok, request{op: "DeleteGroup", method: http.MethodDelete, path: p.teamPath("/groups/" + name)})
	if err != nil {
		return "", err
	}
	if err := del.expectStatus("DeleteGroup", http.StatusNoContent); err != nil {
		return "", err
	}
	if r, g, err = p.getGroup(ctx, tok, name); err != nil {
		return "", err
	}
	if err := r.expectStatus("GetGroup of the deleted group (soft delete)", http.StatusOK); err != nil {
		return "", err
	}
	if g.DeletedAt == nil {
		return "", errors.New("GetGroup of the deleted group: deleted_at is null")
	}
	if listed, err = p.listAll(ctx, tok, url.Values{"contains": {name}}); err != nil {
		return "", err
	}
	if slices.Contains(groupNames(listed), name) {
		return "", errors.New("ListGroups: the deleted group is still listed without include_deleted")
	}
	if listed, err = p.listAll(ctx, tok, url.Values{"contains": {name}, "include_deleted": {"true"}}); err != nil {
		return "", err
	}
	if !slices.Contains(groupNames(listed), name) {
		return "", errors.New("ListGroups?include_deleted=true: the deleted group is not listed")
	}
	return "create 201, read back, listed, update 204 seen, delete 204: deleted_at set, hidden unless include_deleted", nil
}

func (p *pamChecker) checkPaginationWalk(ctx context.Context) (string, error) {
	const groups, count = 7, 2
	tok, err := p.token(ctx)
	if err != nil {
		return "", err
	}
	prefix := uniqueName("conform-page-") + "-"
	var want []string
	defer func() { p.deleteGroups(tok, want...) }()
	for i := range groups {
		name := fmt.Sprintf("%s%d", prefix, i)
		r, err := p.createGroup(ctx, tok, name)
		if err != nil {
			return "", err
		}
		if err := r.expectStatus("CreateGroup", http.StatusCreated); err != nil {
			return "", err
		}
		want = append(want, name)
	}

	type page struct {
		url   string
		names []string
		links map[string]string
	}
	var pages []page
	seen := map[string]int{}
	next := p.teamPath("/groups?" + url.Values{"contains": {prefix}, "count": {strconv.Itoa(count)}}.Encode())
	for next != "" {
		if len(pages) > groups {
			return "", fmt.Errorf("ListGroups: more than %d pages of %d for %d groups: the links loop", groups, count, groups)
		}
		r, err := p.authed(ctx, tok, request{op: "ListGroups", method: http.MethodGet, path: next})
		if err != nil {
			return "", err
		}
		if err := r.expectStatus("ListGroups", http.StatusOK); err != nil {
			return "", err
		}
		var list pamapi.GroupList
		if err := r.decode("ListGroups", &list); err != nil {
			return "", err
		}
		if len(list.List) > count {
			return "", fmt.Errorf("ListGroups: page %d has %d groups with count=%d", len(pages)+1, len(list.List), count)
		}
		links, err := pageLinks(r)
		if err != nil {
			return "", err
		}
		for rel, target := range links {
			u, _ := url.Parse(target)
			if got := u.Query().Get("count"); got != strconv.Itoa(count) {
				return "", fmt.Errorf("ListGroups: the rel=%q link %s does not carry count=%d", rel, target, count)
			}
		}
		for _, g := range list.List {
			seen[g.Name]++
		}
		pages = append(pages, page{url: next, names: groupNames(list.List), links: links})
		next = links["next"]
	}

	var missing, repeated, foreign []string
	for _, n := range want {
		switch seen[n] {
		case 0:
			missing = append(missing, n)
		case 1:
		default:
			repeated = append(repeated, n)
		}
	}
	for n := range seen {
		if !slices.Contains(want, n) {
			foreign = append(foreign, n)
		}
	}
	switch {
	case len(missing) > 0:
		return "", fmt.Errorf("walk of %d pages (count=%d): groups never returned: %v", len(pages), count, missing)
	case len(repeated) > 0:
		return "", fmt.Errorf("walk of %d pages (count=%d): groups returned more than once: %v", len(pages), count, repeated)
	case len(foreign) > 0:
		return "", fmt.Errorf("walk with contains=%s: groups outside the filter returned (the links dropped it?): %v", prefix, foreign)
	case len(pages) != (groups+count-1)/count:
		return "", fmt.Errorf("walk of %d groups with count=%d took %d pages, want %d", groups, count, len(pages), (groups+count-1)/count)
	}
	if _, ok := pages[0].links["prev"]; ok {
		return "", errors.New("ListGroups: the first page has a rel=\"prev\" link")
	}
	// Every prev link leads back to the page before.
	for i := 1; i < len(pages); i++ {
		prev, ok := pages[i].links["prev"]
		if !ok {
			return "", fmt.Errorf("ListGroups: page %d has no rel=\"prev\" link", i+1)
		}
		r, err := p.authed(ctx, tok, request{op: "ListGroups (prev link)", method: http.MethodGet, path: prev})
		if err != nil {
			return "", err
		}
		if err := r.expectStatus("ListGroups (prev link)", http.StatusOK); err != nil {
			return "", err
		}
		var list pamapi.GroupList
		if err := r.decode("ListGroups (prev link)", &list); err != nil {
			return "", err
		}
		if got := groupNames(list.List); !slices.Equal(got, pages[i-1].names) {
			return "", fmt.Errorf("ListGroups: the rel=\"prev\" link of page %d answers %v, page %d was %v", i+1, got, i, pages[i-1].names)
		}
	}
	return fmt.Sprintf("%d groups in %d pages of %d, each once; count in every link; every prev link leads back", groups, len(pages), count), nil
}

func (p *pamChecker) checkNotFound(ctx context.Context) (string, error) {
	tok, err := p.token(ctx)
	if err != nil {
		return "", err
	}
	r, _, err := p.getGroup(ctx, tok, uniqueName("conform-missing-"))
	if err != nil {
		return "", err
	}
	if _, err := expectPAMError("GetGroup of a missing group", r, http.StatusNotFound, pamapi.ErrorNameResourceDoesNotExist); err != nil {
		return "", err
	}
	return "GetGroup of a missing group: 404 resource_does_not_exist", nil
}

func (p *pamChecker) checkAlreadyExists(ctx context.Context) (string, error) {
	tok, err := p.token(ctx)
	if err != nil {
		return "", err
	}
	name := uniqueName("conform-dup-")
	first, err := p.createGroup(ctx, tok, name)
	if err != nil {
		return "", err
	}
	defer p.deleteGroups(tok, name)
	if err := first.expectStatus("CreateGroup", http.StatusCreated); err != nil {
		return "", err
	}
	again, err := p.createGroup(ctx, tok, name)
	if err != nil {
		return "", err
	}
	if _, err := expectPAMError("CreateGroup of an existing name", again, http.StatusConflict, pamapi.ErrorNameResourceAlreadyExists); err != nil {
		return "", err
	}
	return "CreateGroup of an existing name: 409 resource_already_exists", nil
}

func (p *pamChecker) checkInvalidCount(ctx context.Context) (string, error) {
	tok, err := p.token(ctx)
	if err != nil {
		return "", err
	}
	for _, count := range []string{"0", "1001", "many", ""} {
		op := "ListGroups?count=" + count
		r, err := p.authed(ctx, tok, request{op: op, method: http.MethodGet, path: p.teamPath("/groups?count=" + count), badInput: true})
		if err != nil {
			return "", err
		}
		e, err := expectPAMError(op, r, http.StatusBadRequest, pamapi.ErrorNameInvalidRequest)
		if err != nil {
			return "", err
		}
		if !slices.ContainsFunc(e.ErrorCause, func(c pamapi.ErrorCause) bool { return c.Location == "count" }) {
			return "", fmt.Errorf("%s: 400 invalid_request, but no error_cause names the location \"count\": %+v", op, e.ErrorCause)
		}
	}
	return "count=0, 1001, \"many\" and empty: 400 invalid_request naming count", nil
}
