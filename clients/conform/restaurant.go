package conform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"github.com/apistack/apistack/gen/restaurantapi"
	"github.com/apistack/apistack/protocol/contract"
)

// restaurantChecker holds what the restaurant checks share.
type restaurantChecker struct {
	x     *exchange
	creds RestaurantCredentials
}

// The list the walk checks: every restaurant has menu items, and the demo
// restaurant more than one page of them.
const (
	walkList     = "/config/v2/menuItems"
	walkOp       = "ListMenuItems"
	walkPageSize = 50
	nextPage     = "Platform-Next-Page-Token"
)

func restaurantSuite(cfg Config) ([]check, func(), error) {
	if cfg.Credentials.Restaurant == nil {
		return nil, nil, errors.New("the credentials have no restaurant section")
	}
	creds := *cfg.Credentials.Restaurant
	if cfg.BaseURL != "" {
		creds.BaseURL = cfg.BaseURL
	}
	if creds.ClientID == "" || creds.ClientSecret == "" || creds.RestaurantGUID == "" {
		return nil, nil, errors.New("the restaurant section needs client_id, client_secret and restaurant_guid")
	}
	x, err := newExchange(contract.Restaurant, creds.BaseURL, cfg.Transport)
	if err != nil {
		return nil, nil, fmt.Errorf("restaurant: %w", err)
	}
	x.retryRateLimited = true
	r := &restaurantChecker{x: x, creds: creds}
	return []check{
		{"login", r.checkLogin},
		{"missing-restaurant-header", r.checkMissingRestaurant},
		{"pagination-walk", r.checkPaginationWalk},
		{"tampered-page-token", r.checkTamperedPageToken},
		{"get-by-guid", r.checkGetByGUID},
	}, func() {}, nil
}

func (r *restaurantChecker) login(ctx context.Context, secret string) (*response, error) {
	return r.x.send(ctx, request{op: "Login", method: http.MethodPost, path: "/authentication/v1/authentication/login",
		header: header("Content-Type", "application/json"),
		body: jsonBody(restaurantapi.AuthenticationRequest{ClientId: r.creds.ClientID, ClientSecret: secret,
			UserAccessType: restaurantapi.AuthenticationRequestUserAccessTypePLATFORMMACHINECLIENT})})
}

// session logs in with the credentials and returns the answer, which must be
// a 200 with a token.
func (r *restaurantChecker) session(ctx context.Context) (restaurantapi.AuthenticationResponse, error) {
	var a restaurantapi.AuthenticationResponse
	resp, err := r.login(ctx, r.creds.ClientSecret)
	if err != nil {
		return a, err
	}
	if err := resp.expectStatus("Login", http.StatusOK); err != nil {
		return a, err
	}
	if err := resp.decode("Login", &a); err != nil {
		return a, err
	}
	if a.Token.AccessToken == "" {
		return a, errors.New("login: 200 with an empty accessToken")
	}
	return a, nil
}

// token logs in with the credentials.
func (r *restaurantChecker) token(ctx context.Context) (string, error) {
	a, err := r.session(ctx)
	return a.Token.AccessToken, err
}

// get sends an authenticated GET for the credentials' restaurant.
func (r *restaurantChecker) get(ctx context.Context, op, token, path string) (*response, error) {
	return r.x.send(ctx, request{op: op, method: http.MethodGet, path: path, header: header(
		"Authorization", "Bearer "+token,
		"Platform-Restaurant-External-ID", r.creds.RestaurantGUID)})
}

// expectRestaurantError checks an error answer: the status and the
// documented body {status, code, message, messageKey, requestId, ...} with
// status equal to the HTTP status and the messageKey wanted.
func expectRestaurantError(op string, resp *response, status int, key restaurantapi.ErrorKey) (restaurantapi.Error, error) {
	var e restaurantapi.Error
	if resp.status != status {
		return e, fmt.Errorf("%s: want %d %s, got %d: %s", op, status, key, resp.status, snippet(resp.body))
	}
	if err := resp.decode(op, &e); err != nil {
		return e, err
	}
	switch {
	case e.MessageKey != key:
		return e, fmt.Errorf("%s: want messageKey %s, got %q (%s)", op, key, e.MessageKey, e.Message)
	case e.Status != status:
		return e, fmt.Errorf("%s: body status %d differs from the HTTP status %d", op, e.Status, status)
	case strings.TrimSpace(e.Message) == "":
		return e, fmt.Errorf("%s: %s without a message", op, key)
	case e.RequestId == "":
		return e, fmt.Errorf("%s: %s without a requestId", op, key)
	}
	return e, nil
}

func (r *restaurantChecker) checkLogin(ctx context.Context) (string, error) {
	a, err := r.session(ctx)
	if err != nil {
		return "", err
	}
	if a.Token.ExpiresIn <= 0 {
		return "", fmt.Errorf("login: expiresIn %d", a.Token.ExpiresIn)
	}
	// The token works.
	list, err := r.get(ctx, walkOp, a.Token.AccessToken, walkList+"?pageSize=1")
	if err != nil {
		return "", err
	}
	if err := list.expectStatus(walkOp+" with the token", http.StatusOK); err != nil {
		return "", err
	}
	bad, err := r.login(ctx, r.creds.ClientSecret+"x")
	if err != nil {
		return "", err
	}
	if _, err := expectRestaurantError("Login with a wrong secret", bad, http.StatusUnauthorized, restaurantapi.ErrorKeyINVALIDCREDENTIALS); err != nil {
		return "", err
	}
	noToken, err := r.x.send(ctx, request{op: walkOp + " with a bad token", method: http.MethodGet, path: walkList,
		header: header("Authorization", "Bearer conform-not-a-token", "Platform-Restaurant-External-ID", r.creds.RestaurantGUID)})
	if err != nil {
		return "", err
	}
	if _, err := expectRestaurantError(walkOp+" with a bad token", noToken, http.StatusUnauthorized, restaurantapi.ErrorKeyINVALIDTOKEN); err != nil {
		return "", err
	}
	return "good secret: 200 with a working token; wrong secret: 401 INVALID_CREDENTIALS; bad token: 401 INVALID_TOKEN", nil
}

func (r *restaurantChecker) checkMissingRestaurant(ctx context.Context) (string, error) {
	tok, err := r.token(ctx)
	if err != nil {
		return "", err
	}
	op := walkOp + " without Platform-Restaurant-External-ID"
	resp, err := r.x.send(ctx, request{op: op, method: http.MethodGet, path: walkList,
		header: header("Authorization", "Bearer "+tok), badInput: true})
	if err != nil {
		return "", err
	}
	e, err := expectRestaurantError(op, resp, http.StatusBadRequest, restaurantapi.ErrorKeyMISSINGRESTAURANTEXTERNALID)
	if err != nil {
		return "", err
	}
	if e.FieldName == nil || !strings.EqualFold(*e.FieldName, "Platform-Restaurant-External-ID") {
		return "", fmt.Errorf("%s: fieldName %v, want Platform-Restaurant-External-ID", op, e.FieldName)
	}
	return "400 MISSING_RESTAURANT_EXTERNAL_ID naming the header", nil
}

// walk is the outcome of a pagination walk.
type walk struct {
	items  []map[string]any
	pages  int
	tokens []string
}

// walkItems follows Platform-Next-Page-Token from the first page to the end.
func (r *restaurantChecker) walkItems(ctx context.Context, tok string, pageSize int) (walk, error) {
	var w walk
	seen := map[string]int{}
	query := url.Values{"pageSize": {strconv.Itoa(pageSize)}}
	for {
		resp, err := r.get(ctx, walkOp, tok, walkList+"?"+query.Encode())
		if err != nil {
			return w, err
		}
		if err := resp.expectStatus(fmt.Sprintf("%s page %d", walkOp, w.pages+1), http.StatusOK); err != nil {
			return w, err
		}
		var page []map[string]any
		if err := resp.decode(walkOp, &page); err != nil {
			return w, err
		}
		w.pages++
		if len(page) > pageSize {
			return w, fmt.Errorf("%s: page %d has %d items with pageSize=%d", walkOp, w.pages, len(page), pageSize)
		}
		for _, it := range page {
			guid, _ := it["guid"].(string)
			if seen[guid]++; seen[guid] > 1 {
				return w, fmt.Errorf("%s: item %s returned twice (again on page %d)", walkOp, guid, w.pages)
			}
			w.items = append(w.items, it)
		}
		token, present := resp.header[http.CanonicalHeaderKey(nextPage)]
		if !present {
			return w, nil
		}
		if len(token) != 1 || token[0] == "" {
			return w, fmt.Errorf("%s: page %d has an empty %s", walkOp, w.pages, nextPage)
		}
		if len(page) == 0 {
			return w, fmt.Errorf("%s: page %d is empty but carries %s: it is absent on the last page", walkOp, w.pages, nextPage)
		}
		if w.pages >= 1000 {
			return w, fmt.Errorf("%s: more than 1000 pages: the tokens loop", walkOp)
		}
		w.tokens = append(w.tokens, token[0])
		query.Set("pageToken", token[0])
	}
}

func (r *restaurantChecker) checkPaginationWalk(ctx context.Context) (string, error) {
	tok, err := r.token(ctx)
	if err != nil {
		return "", err
	}
	size := walkPageSize
	w, err := r.walkItems(ctx, tok, size)
	if err != nil {
		return "", err
	}
	if w.pages == 1 && len(w.items) >= 2 {
		// Fewer items than a page: walk again in pages of half of them.
		size = (len(w.items) + 1) / 2
		if w, err = r.walkItems(ctx, tok, size); err != nil {
			return "", err
		}
	}
	if len(w.items) < 2 {
		return "", fmt.Errorf("%s: the restaurant has %d menu items, too few for a walk of two pages", walkOp, len(w.items))
	}
	if w.pages < 2 {
		return "", fmt.Errorf("%s: %d items in one page with pageSize=%d", walkOp, len(w.items), size)
	}
	if last := len(w.items) - (w.pages-1)*size; last <= 0 || last > size {
		return "", fmt.Errorf("%s: %d items in %d pages of %d: a page before the last was not full", walkOp, len(w.items), w.pages, size)
	}
	return fmt.Sprintf("%d menu items in %d pages of %d, no duplicates, no %s on the last page", len(w.items), w.pages, size, nextPage), nil
}

func (r *restaurantChecker) checkTamperedPageToken(ctx context.Context) (string, error) {
	tok, err := r.token(ctx)
	if err != nil {
		return "", err
	}
	first, err := r.get(ctx, walkOp, tok, walkList+"?pageSize=1")
	if err != nil {
		return "", err
	}
	if err := first.expectStatus(walkOp, http.StatusOK); err != nil {
		return "", err
	}
	token := first.header.Get(nextPage)
	if token == "" {
		return "", fmt.Errorf("%s?pageSize=1: no %s to tamper with (fewer than 2 menu items?)", walkOp, nextPage)
	}
	tampered := tamperToken(token)
	op := walkOp + " with a tampered pageToken"
	resp, err := r.get(ctx, op, tok, walkList+"?"+url.Values{"pageSize": {"1"}, "pageToken": {tampered}}.Encode())
	if err != nil {
		return "", err
	}
	if _, err := expectRestaurantError(op, resp, http.StatusBadRequest, restaurantapi.ErrorKeyINVALIDPAGETOKEN); err != nil {
		return "", err
	}
	return "a pageToken with one character changed: 400 INVALID_PAGE_TOKEN", nil
}

// tamperToken changes the middle character of a token to another character of
// the URL-safe base64 alphabet.
func tamperToken(t string) string {
	b := []byte(t)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

func (r *restaurantChecker) checkGetByGUID(ctx context.Context) (string, error) {
	tok, err := r.token(ctx)
	if err != nil {
		return "", err
	}
	list, err := r.get(ctx, walkOp, tok, walkList+"?pageSize=3")
	if err != nil {
		return "", err
	}
	if err := list.expectStatus(walkOp, http.StatusOK); err != nil {
		return "", err
	}
	var items []map[string]any
	if err := list.decode(walkOp, &items); err != nil {
		return "", err
	}
	if len(items) == 0 {
		return "", fmt.Errorf("%s: the restaurant has no menu items to get", walkOp)
	}
	for _, it := range items {
		guid, _ := it["guid"].(string)
		resp, err := r.get(ctx, "GetMenuItem", tok, walkList+"/"+url.PathEscape(guid))
		if err != nil {
			return "", err
		}
		if err := resp.expectStatus("GetMenuItem "+guid, http.StatusOK); err != nil {
			return "", err
		}
		var got map[string]any
		if err := resp.decode("GetMenuItem", &got); err != nil {
			return "", err
		}
		if !reflect.DeepEqual(got, it) {
			a, _ := json.Marshal(it)
			b, _ := json.Marshal(got)
			return "", fmt.Errorf("GetMenuItem %s answers %s; the list showed %s", guid, snippet(b), snippet(a))
		}
	}
	missing := "00000000-0000-4000-8000-000000000000"
	resp, err := r.get(ctx, "GetMenuItem of a missing GUID", tok, walkList+"/"+missing)
	if err != nil {
		return "", err
	}
	if _, err := expectRestaurantError("GetMenuItem of a missing GUID", resp, http.StatusNotFound, restaurantapi.ErrorKeyNOTFOUND); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d menu items read by GUID equal their list entries; a missing GUID: 404 NOT_FOUND", len(items)), nil
}
