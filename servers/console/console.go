// Package console is the web console on the admin port, under /console/:
// server-rendered pages (html/template, embedded assets, no external
// resource) showing what each API holds and does: fax timelines and webhook
// delivery attempts (with redelivery), PAM teams and keys, restaurant
// configuration, storage lifecycle rules, the last requests of each API and
// the sandboxes (their clocks, faults, journals, webhook logs, snapshots
// and forks).
//
// It sits behind the admin token: a login form exchanges the token for a
// session cookie (HttpOnly, SameSite=Strict, Path=/console) holding a random
// session id, never the token. Sessions are kept in memory. Every POST form
// carries the session's CSRF token, checked in constant time. No page shows
// a secret: the servers' console views hold none (key ids, never key
// secrets; tokens counted, never shown; webhook URLs without their query).
package console

import (
	"crypto/sha256"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/apistack/apistack/servers/internal/failguard"
	"github.com/apistack/apistack/servers/internal/requestlog"
)

// Prefix is where the console is mounted.
const Prefix = "/console/"

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// InboxEvent is one webhook delivery the demo's inbox (on the admin port)
// received and verified. The body is not shown: it carries signed media
// links.
type InboxEvent struct {
	ID, Type, FaxID string
	Attempt         int
	ReceivedAt      time.Time
}

// Config is what the console shows and how it is guarded.
type Config struct {
	// AdminToken is the admin API's token, which logs in; it must not be
	// empty.
	AdminToken string
	// The servers shown; a nil server's page says it is not running.
	Fax        Fax
	PAM        PAM
	Restaurant Restaurant
	Storage    Storage
	// Sandboxes is the sandbox API (the Sandboxes page); nil says it is
	// not running.
	Sandboxes Sandboxes
	// Requests is the log of the last requests of each API (the Requests
	// page); nil shows an empty log.
	Requests *requestlog.Log
	// Inbox lists the demo inbox's deliveries, newest last; nil for none.
	Inbox func() []InboxEvent
	// DocsURLs maps an API's name to its Swagger UI, linked from the nav.
	DocsURLs map[string]string
	// SessionTTL is how long a login lasts; 0 means 12 hours.
	SessionTTL time.Duration
	// Now tells the time; nil means time.Now.
	Now func() time.Time
	// Logger receives errors; nil means slog.Default().
	Logger *slog.Logger
}

// Console serves the console's pages.
type Console struct {
	cfg       Config
	tokenHash [32]byte
	sessions  *sessions
	pages     map[string]*template.Template
	static    http.Handler
	// wrongLogins limits the wrong tokens of each source (failguard's
	// defaults: 10 at once, then one per 6 seconds).
	wrongLogins *failguard.Guard
}

// New returns the console of cfg.
func New(cfg Config) (*Console, error) {
	if cfg.AdminToken == "" {
		return nil, errors.New("console: Config.AdminToken is empty")
	}
	if cfg.SessionTTL == 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Requests == nil {
		cfg.Requests = requestlog.New(0)
	}
	c := &Console{cfg: cfg, tokenHash: sha256.Sum256([]byte(cfg.AdminToken)), sessions: newSessions(cfg.SessionTTL, cfg.Now), pages: map[string]*template.Template{},
		wrongLogins: failguard.New(0, 0, cfg.Now)}
	for _, page := range []string{"login", "fax", "fax_live", "pam", "restaurant", "storage", "requests", "sandboxes", "sandbox"} {
		t := template.New("layout.html").Funcs(funcs)
		var err error
		if page == "fax_live" {
			t, err = template.New("fax_live.html").Funcs(funcs).ParseFS(templateFiles, "templates/fax_live.html")
		} else {
			t, err = t.ParseFS(templateFiles, "templates/layout.html", "templates/"+page+".html", "templates/fax_live.html", "templates/fault.html")
		}
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", page, err)
		}
		c.pages[page] = t
	}
	sub, err := fs.Sub(staticFiles, "static")
	if err != nil {
		return nil, fmt.Errorf("console: static files: %w", err)
	}
	c.static = http.StripPrefix(Prefix+"static/", http.FileServerFS(sub))
	return c, nil
}

// Handler serves the console under Prefix.
func (c *Console) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Prefix+"{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix+"fax", http.StatusSeeOther)
	})
	mux.Handle("GET "+Prefix+"static/", c.static)
	mux.HandleFunc("GET "+Prefix+"login", c.loginForm)
	mux.HandleFunc("POST "+Prefix+"login", c.login)
	mux.Handle("POST "+Prefix+"logout", c.action(c.logout))
	mux.Handle("GET "+Prefix+"fax", c.page(c.faxPage))
	mux.Handle("GET "+Prefix+"fax/live", c.page(c.faxLive))
	mux.Handle("POST "+Prefix+"fax/redeliver", c.action(c.redeliver))
	mux.Handle("GET "+Prefix+"pam", c.page(c.pamPage))
	mux.Handle("GET "+Prefix+"restaurant", c.page(c.restaurantPage))
	mux.Handle("POST "+Prefix+"restaurant/demo", c.action(c.restaurantDemo))
	mux.Handle("POST "+Prefix+"restaurant/import", c.action(c.restaurantImport))
	mux.Handle("GET "+Prefix+"storage", c.page(c.storagePage))
	mux.Handle("GET "+Prefix+"requests", c.page(c.requestsPage))
	mux.Handle("GET "+Prefix+"sandboxes", c.page(c.sandboxesPage))
	mux.Handle("GET "+Prefix+"sandboxes/{id}", c.page(c.sandboxPage))
	mux.Handle("POST "+Prefix+"sandboxes/{id}/redeliver", c.action(c.sandboxRedeliver))
	mux.Handle("POST "+Prefix+"sandboxes/{id}/snapshot", c.action(c.sandboxSnapshot))
	mux.Handle("POST "+Prefix+"sandboxes/fork", c.action(c.sandboxFork))
	return securityHeaders(mux)
}

// securityHeaders keeps the pages to their own origin and out of caches
// and frames.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; script-src 'self'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// view is what every page template gets.
type view struct {
	Title, Nav string
	CSRF       string
	DocsURLs   map[string]string
	Error      string
	Data       any
}

type pageFunc func(w http.ResponseWriter, r *http.Request, s *session) error

// page serves a GET page to a logged-in browser; others go to the login
// form (a page) or get 401 (a live fragment).
func (c *Console) page(f pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := c.sessions.get(r)
		if s == nil {
			if r.Header.Get("X-Console-Live") != "" {
				http.Error(w, "log in again", http.StatusUnauthorized)
				return
			}
			http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
			return
		}
		if err := f(w, r, s); err != nil {
			c.fail(w, r, err)
		}
	})
}

// action serves a POST form of a logged-in browser whose CSRF token is the
// session's: anything else is refused 403 and does nothing.
func (c *Console) action(f pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 4<<20)
		s := c.sessions.get(r)
		if s == nil {
			http.Error(w, "not logged in", http.StatusForbidden)
			return
		}
		if err := r.ParseForm(); err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		if !equal(r.PostForm.Get("csrf"), s.csrf) {
			http.Error(w, "forged or stale form (CSRF token mismatch): reload the page", http.StatusForbidden)
			return
		}
		if err := f(w, r, s); err != nil {
			c.fail(w, r, err)
		}
	})
}

func (c *Console) fail(w http.ResponseWriter, r *http.Request, err error) {
	c.cfg.Logger.ErrorContext(r.Context(), "console", "path", r.URL.Path, "err", err)
	http.Error(w, "the console failed to read its data; see the server's log", http.StatusInternalServerError)
}

// render writes page with v.
func (c *Console) render(w http.ResponseWriter, page string, status int, v view) error {
	v.DocsURLs = c.cfg.DocsURLs
	t := c.pages[page]
	name := "layout.html"
	if page == "fax_live" {
		name = "fax_live.html"
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := t.ExecuteTemplate(w, name, v); err != nil {
		c.cfg.Logger.Error("console: render", "page", page, "err", err)
	}
	return nil
}

func (c *Console) loginForm(w http.ResponseWriter, r *http.Request) {
	if c.sessions.get(r) != nil {
		http.Redirect(w, r, Prefix+"fax", http.StatusSeeOther)
		return
	}
	c.showLogin(w, http.StatusOK, "")
}

func (c *Console) showLogin(w http.ResponseWriter, status int, msg string) {
	token := randomToken()
	setCookie(w, loginCookie, token, 600)
	_ = c.render(w, "login", status, view{Title: "Log in", CSRF: token, Error: msg})
}

// login checks the admin token (in constant time) and the login form's
// double-submitted CSRF token, then starts a session.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	ck, err := r.Cookie(loginCookie)
	if err != nil || !equal(ck.Value, r.PostForm.Get("csrf")) {
		http.Error(w, "forged or stale login form (CSRF token mismatch): reload the page", http.StatusForbidden)
		return
	}
	src := failguard.Source(r)
	if wait, blocked := c.wrongLogins.Blocked(src); blocked {
		secs := int(math.Ceil(wait.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		c.showLogin(w, http.StatusTooManyRequests, fmt.Sprintf("Too many wrong tokens from this address: try again in %d s.", secs))
		return
	}
	sum := sha256.Sum256([]byte(r.PostForm.Get("token")))
	if !equal(string(sum[:]), string(c.tokenHash[:])) {
		c.wrongLogins.Fail(src)
		c.showLogin(w, http.StatusUnauthorized, "That is not the admin token.")
		return
	}
	id, _ := c.sessions.create()
	setCookie(w, loginCookie, "", -1)
	setCookie(w, sessionCookie, id, int(c.cfg.SessionTTL.Seconds()))
	http.Redirect(w, r, Prefix+"fax", http.StatusSeeOther)
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request, _ *session) error {
	c.sessions.end(r)
	setCookie(w, sessionCookie, "", -1)
	http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
	return nil
}

// SetDocsURLs sets the links to each API's Swagger UI, once the listeners'
// addresses are known; call it before serving.
func (c *Console) SetDocsURLs(urls map[string]string) {
	c.cfg.DocsURLs = urls
}
