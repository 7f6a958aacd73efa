package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/internal/requestlog"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/restaurant"
	"github.com/apistack/apistack/servers/storage"
)

var funcs = template.FuncMap{
	"clock": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05.000Z")
	},
	"clockp": func(t *time.Time) string {
		if t == nil {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05.000Z")
	},
	"ms": func(d time.Duration) string {
		return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) + " ms"
	},
	"age": func(now, t time.Time) string {
		return now.Sub(t).Truncate(time.Second).String()
	},
	"join":  strings.Join,
	"lower": strings.ToLower,
}

// faxView is the Fax page.
type faxView struct {
	Running  bool
	Accounts []fax.Account
	Account  string
	Faxes    []fax.ConsoleFax
	// InFlight reports a fax or an event still moving: the page polls fast.
	InFlight bool
	Inbox    []InboxEvent
	CSRF     string
}

const faxesShown = 50

func (c *Console) faxData(r *http.Request, s *session) (faxView, error) {
	v := faxView{Running: c.cfg.Fax != nil, CSRF: s.csrf}
	if c.cfg.Fax == nil {
		return v, nil
	}
	ctx := r.Context()
	accounts, err := c.cfg.Fax.Accounts(ctx)
	if err != nil {
		return v, err
	}
	v.Accounts = accounts
	v.Account = r.URL.Query().Get("account")
	if v.Account == "" && len(accounts) > 0 {
		v.Account = accounts[0].ID
		for _, a := range accounts {
			if a.Name == "demo" {
				v.Account = a.ID
			}
		}
	}
	if v.Account != "" {
		v.Faxes, err = c.cfg.Fax.Faxes(ctx, v.Account, faxesShown)
		if err != nil {
			return v, err
		}
	}
	for _, f := range v.Faxes {
		if !f.Final {
			v.InFlight = true
		}
		for _, e := range f.Events {
			if e.State() == "pending" {
				v.InFlight = true
			}
		}
	}
	if c.cfg.Inbox != nil {
		in := c.cfg.Inbox()
		slices.Reverse(in)
		v.Inbox = in[:min(len(in), 20)]
	}
	return v, nil
}

func (c *Console) faxPage(w http.ResponseWriter, r *http.Request, s *session) error {
	v, err := c.faxData(r, s)
	if err != nil {
		return err
	}
	return c.render(w, "fax", http.StatusOK, view{Title: "Fax", Nav: "fax", CSRF: s.csrf, Data: v})
}

// faxLive is the fragment the Fax page polls for: the faxes and the inbox.
func (c *Console) faxLive(w http.ResponseWriter, r *http.Request, s *session) error {
	v, err := c.faxData(r, s)
	if err != nil {
		return err
	}
	return c.render(w, "fax_live", http.StatusOK, view{CSRF: s.csrf, Data: v})
}

func (c *Console) redeliver(w http.ResponseWriter, r *http.Request, _ *session) error {
	if c.cfg.Fax == nil {
		http.Error(w, "the fax API is not running", http.StatusNotFound)
		return nil
	}
	seq, err := strconv.ParseInt(r.PostForm.Get("seq"), 10, 64)
	if err != nil {
		http.Error(w, "seq must be an event's number", http.StatusBadRequest)
		return nil
	}
	newSeq, err := c.cfg.Fax.Redeliver(r.Context(), seq)
	if errors.Is(err, fax.ErrNotFound) {
		http.Error(w, "no such event", http.StatusNotFound)
		return nil
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, fmt.Sprintf("%sfax?account=%s#event-%d", Prefix, url.QueryEscape(r.PostForm.Get("account")), newSeq), http.StatusSeeOther)
	return nil
}

func (c *Console) pamPage(w http.ResponseWriter, r *http.Request, s *session) error {
	return listPage(c, w, r, s, "pam", "PAM", c.cfg.PAM != nil, func(ctx context.Context) ([]pam.ConsoleTeam, error) {
		return c.cfg.PAM.Teams(ctx)
	})
}

// listView is the page of one API's list (its teams, its buckets).
type listView[T any] struct {
	// Running says whether the API runs: Items is empty when not.
	Running bool
	Items   []T
}

// listPage renders the page name of an API whose list is all it shows:
// the list when the API is running.
func listPage[T any](c *Console, w http.ResponseWriter, r *http.Request, s *session, name, title string, running bool,
	list func(context.Context) ([]T, error)) error {
	var items []T
	if running {
		var err error
		if items, err = list(r.Context()); err != nil {
			return err
		}
	}
	return c.render(w, name, http.StatusOK, view{Title: title, Nav: name, CSRF: s.csrf, Data: listView[T]{running, items}})
}

// restaurantView is the Restaurant page.
type restaurantView struct {
	Running     bool
	Restaurants []restaurant.Restaurant
	Clients     []restaurant.ConsoleClient
	Resources   []string
	// The list browsed.
	Restaurant, Resource string
	PageSize             int
	Entities             []entityView
	NextToken            string
	BrowseError          string
	// The result of the demo generator or an import.
	Result *importView
}

type entityView struct {
	GUID, Name, EntityType string
	JSON                   string
}

type importView struct {
	What     string
	Total    int
	Counts   map[string]int
	Problems []string
	Count    int
	Error    string
}

func (c *Console) restaurantData(r *http.Request) (restaurantView, error) {
	v := restaurantView{Running: c.cfg.Restaurant != nil, Resources: restaurant.Resources(), PageSize: 10}
	if c.cfg.Restaurant == nil {
		return v, nil
	}
	ctx := r.Context()
	var err error
	if v.Restaurants, err = c.cfg.Restaurant.Restaurants(ctx); err != nil {
		return v, err
	}
	if v.Clients, err = c.cfg.Restaurant.Clients(ctx); err != nil {
		return v, err
	}
	v.Resources = slices.DeleteFunc(v.Resources, func(s string) bool { return s == "tipWithholding" })
	q := r.URL.Query()
	v.Restaurant, v.Resource = q.Get("restaurant"), q.Get("resource")
	if v.Restaurant == "" && len(v.Restaurants) > 0 {
		v.Restaurant = v.Restaurants[0].GUID
	}
	if v.Resource == "" {
		v.Resource = "menuItems"
	}
	if n, err := strconv.Atoi(q.Get("pageSize")); err == nil && n > 0 && n <= 100 {
		v.PageSize = n
	}
	if v.Restaurant != "" {
		docs, next, err := c.cfg.Restaurant.Page(ctx, v.Restaurant, v.Resource, q.Get("pageToken"), v.PageSize)
		if err != nil {
			v.BrowseError = err.Error()
		}
		v.NextToken = next
		for _, d := range docs {
			var e struct {
				GUID       string `json:"guid"`
				Name       string `json:"name"`
				EntityType string `json:"entityType"`
			}
			_ = json.Unmarshal(d, &e)
			var pretty bytes.Buffer
			if json.Indent(&pretty, d, "", "  ") != nil {
				pretty.Write(d)
			}
			v.Entities = append(v.Entities, entityView{GUID: e.GUID, Name: e.Name, EntityType: e.EntityType, JSON: pretty.String()})
		}
	}
	return v, nil
}

func (c *Console) restaurantPage(w http.ResponseWriter, r *http.Request, s *session) error {
	v, err := c.restaurantData(r)
	if err != nil {
		return err
	}
	return c.render(w, "restaurant", http.StatusOK, view{Title: "Restaurant", Nav: "restaurant", CSRF: s.csrf, Data: v})
}

// importResult shows what an import did, or why it was refused.
func importResult(what string, res restaurant.ImportResult, err error) *importView {
	iv := &importView{What: what, Total: res.Total, Counts: res.Counts}
	var ie *restaurant.ImportError
	switch {
	case errors.As(err, &ie):
		iv.Problems, iv.Count = ie.Problems, ie.Count
	case err != nil:
		iv.Error = err.Error()
	}
	return iv
}

func (c *Console) restaurantAction(w http.ResponseWriter, r *http.Request, s *session, what string, run func(guid string) (restaurant.ImportResult, error)) error {
	if c.cfg.Restaurant == nil {
		http.Error(w, "the restaurant API is not running", http.StatusNotFound)
		return nil
	}
	guid := r.PostForm.Get("restaurant")
	res, err := run(guid)
	status := http.StatusOK
	if err != nil {
		status = http.StatusUnprocessableEntity
	}
	r.URL.RawQuery = url.Values{"restaurant": {guid}}.Encode()
	v, derr := c.restaurantData(r)
	if derr != nil {
		return derr
	}
	v.Result = importResult(what, res, err)
	return c.render(w, "restaurant", status, view{Title: "Restaurant", Nav: "restaurant", CSRF: s.csrf, Data: v})
}

func (c *Console) restaurantDemo(w http.ResponseWriter, r *http.Request, s *session) error {
	items, err := strconv.Atoi(r.PostForm.Get("items"))
	if err != nil || items < 0 || items > 5000 {
		items = 50
	}
	seed, _ := strconv.ParseUint(r.PostForm.Get("seed"), 10, 64)
	return c.restaurantAction(w, r, s, "demo generator", func(guid string) (restaurant.ImportResult, error) {
		return c.cfg.Restaurant.GenerateDemo(r.Context(), guid, items, seed)
	})
}

func (c *Console) restaurantImport(w http.ResponseWriter, r *http.Request, s *session) error {
	doc := r.PostForm.Get("document")
	return c.restaurantAction(w, r, s, "import", func(guid string) (restaurant.ImportResult, error) {
		return c.cfg.Restaurant.Import(r.Context(), guid, []byte(doc))
	})
}

func (c *Console) storagePage(w http.ResponseWriter, r *http.Request, s *session) error {
	return listPage(c, w, r, s, "storage", "Storage", c.cfg.Storage != nil, func(ctx context.Context) ([]storage.ConsoleBucket, error) {
		return c.cfg.Storage.Buckets(ctx)
	})
}

// requestsView is the Requests page.
type requestsView struct {
	APIs                      []string
	API, Operation, StatusArg string
	ViolationsOnly            bool
	Limit                     int
	Entries                   []requestlog.Entry
}

// statusRange reads a status filter: "404", "4xx" or "".
func statusRange(s string) (lo, hi int) {
	if len(s) == 3 && strings.HasSuffix(s, "xx") && s[0] >= '1' && s[0] <= '5' {
		base := int(s[0]-'0') * 100
		return base, base + 99
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 100 && n <= 599 {
		return n, n
	}
	return 0, 0
}

func (c *Console) requestsPage(w http.ResponseWriter, r *http.Request, s *session) error {
	q := r.URL.Query()
	v := requestsView{
		APIs: []string{"pam", "fax", "storage", "restaurant", "admin"},
		API:  q.Get("api"), Operation: q.Get("operation"), StatusArg: q.Get("status"),
		ViolationsOnly: q.Get("violations") != "", Limit: 100,
	}
	if n, err := strconv.Atoi(q.Get("limit")); err == nil && n > 0 && n <= requestlog.DefaultPerAPI*5 {
		v.Limit = n
	}
	lo, hi := statusRange(v.StatusArg)
	f := requestlog.Filter{API: v.API, Operation: v.Operation, MinStatus: lo, MaxStatus: hi, ViolationsOnly: v.ViolationsOnly, Limit: v.Limit}
	if v.API != "" {
		v.Entries = c.cfg.Requests.Recent(f)
	} else {
		// The last Limit of each API, so a busy API does not hide a quiet one.
		for _, api := range v.APIs {
			f.API = api
			v.Entries = append(v.Entries, c.cfg.Requests.Recent(f)...)
		}
		slices.SortStableFunc(v.Entries, func(a, b requestlog.Entry) int { return b.Time.Compare(a.Time) })
	}
	return c.render(w, "requests", http.StatusOK, view{Title: "Requests", Nav: "requests", CSRF: s.csrf, Data: v})
}
