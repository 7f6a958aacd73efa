package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/internal/egress"
)

const listenUsage = `usage: apistack listen --sandbox ID --forward-to URL [--url ADMIN_URL] [--token TOKEN] [--after SEQ]

Streams a sandbox's fax webhook events from a (possibly remote) apistack and posts each
once, as its first delivery was signed (headers and body), to a local URL: a receiver there
verifies the signature as it would the stand-in's own delivery. The remote side's retries of
an event (its delivery failed there) are not forwarded again; a redelivery (POST
.../redeliver) is a new copy of the event and is. One line per forward: the event type, the
event id, the attempt forwarded and the local answer. It long-polls the sandbox's webhook log
(GET /sandboxes/{id}/webhooks), so it survives a restart of the remote side and resumes after
the last delivery it read. --after starts after that log seq (default: from the start); an
event read before it and retried after it is forwarded once more. --forward-to must reach a
loopback or public address: private, link-local and cloud-metadata ones are refused, however
the address is spelled.

The URL and token default to APISTACK_SANDBOX_URL and APISTACK_SANDBOX_TOKEN, then to
<data-dir>/demo-credentials.json (the admin section). The token is the sandbox's own (or the
admin token).
`

// listenWait is how long each long poll of the webhook log waits.
const listenWait = "25s"

// listenRetryMax bounds the wait between tries while the remote side is
// down.
const listenRetryMax = 5 * time.Second

// listenOptions are `apistack listen`'s settings.
type listenOptions struct {
	sandbox, forwardTo, url, token string
	after                          int64
}

func listenCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("listen", stderr)
	fs.Usage = func() { fmt.Fprint(stderr, listenUsage); fs.PrintDefaults() }
	var o listenOptions
	fs.StringVar(&o.sandbox, "sandbox", "", "the sandbox whose webhooks to forward (sbx-…)")
	fs.StringVar(&o.forwardTo, "forward-to", "", "the local URL each delivery is posted to")
	fs.Int64Var(&o.after, "after", 0, "forward only the deliveries after this webhook log seq")
	ep := endpoint{url: fs.String("url", "", "the apistack admin port's base URL (the sandbox API)"),
		token: fs.String("token", "", "the sandbox's own token, or the admin token"), dataDir: fs.String("data-dir", "data", "where demo-credentials.json is")}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *ep.url == "" {
		*ep.url = os.Getenv("APISTACK_SANDBOX_URL")
	}
	if *ep.token == "" {
		*ep.token = os.Getenv("APISTACK_SANDBOX_TOKEN")
	}
	var err error
	o.url, o.token, err = ep.resolve(func(c demoCredentials) (string, string) {
		if c.Admin == nil {
			return "", ""
		}
		return c.Admin.BaseURL, c.Admin.Token
	}, "no token: set --token (the sandbox's own) or APISTACK_SANDBOX_TOKEN")
	if err != nil {
		return err
	}
	if o.sandbox == "" {
		return errors.New("--sandbox is required")
	}
	if u, err := url.Parse(o.forwardTo); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--forward-to %q is not an absolute http(s) URL", o.forwardTo)
	}
	if err := forwardPolicy.Check(ctx, o.forwardTo); err != nil {
		return fmt.Errorf("--forward-to %q: %w (listen forwards to loopback or public addresses only, never link-local or cloud-metadata ones)", o.forwardTo, err)
	}
	return listen(ctx, o, stdout, stderr)
}

// forwardPolicy is where listen may forward: the developer's own services
// on loopback, or public addresses; never private, link-local or
// cloud-metadata ones (the URL is checked when given, and every connection
// once more).
var forwardPolicy = func() *egress.Policy {
	p, err := egress.New(egress.Options{AllowLoopback: true})
	if err != nil {
		panic(err) // the options are constant
	}
	return p
}()

// listen forwards the sandbox's deliveries until ctx ends (nil then) or the
// sandbox API refuses (the sandbox is gone, the token is wrong).
func listen(ctx context.Context, o listenOptions, stdout, stderr io.Writer) error {
	client, err := sandboxapi.NewClientWithResponses(o.url,
		sandboxapi.WithHTTPClient(&http.Client{Timeout: 60 * time.Second}),
		sandboxapi.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+o.token)
			return nil
		}))
	if err != nil {
		return err
	}
	local := &http.Client{Timeout: 30 * time.Second, Transport: forwardPolicy.Transport(http.DefaultTransport.(*http.Transport)),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	fmt.Fprintf(stderr, "forwarding the webhooks of sandbox %s to %s (Ctrl-C to stop)\n", o.sandbox, o.forwardTo)
	after, retry, down := o.after, 250*time.Millisecond, false
	wait := listenWait
	var events forwardedEvents
	for ctx.Err() == nil {
		resp, err := client.ListSandboxWebhooksWithResponse(ctx, o.sandbox,
			&sandboxapi.ListSandboxWebhooksParams{After: &after, Limit: ptrTo(100), Wait: &wait})
		switch {
		case ctx.Err() != nil:
			return nil
		case err == nil && resp.StatusCode() == http.StatusOK && resp.JSON200 != nil:
		case err == nil && resp.StatusCode() < 500:
			msg := string(bytes.TrimSpace(resp.Body))
			for _, e := range []*sandboxapi.Error{resp.JSON400, resp.JSON401, resp.JSON403, resp.JSON404} {
				if e != nil {
					msg = e.Message
				}
			}
			return fmt.Errorf("the sandbox API answered %d: %s", resp.StatusCode(), msg)
		default:
			if err == nil {
				err = fmt.Errorf("the sandbox API answered %d", resp.StatusCode())
			}
			if !down {
				fmt.Fprintf(stderr, "the sandbox API is unreachable (%v); retrying, resuming after %d\n", err, after)
				down = true
			}
			t := time.NewTimer(retry)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
			retry = min(2*retry, listenRetryMax)
			continue
		}
		if down {
			fmt.Fprintln(stderr, "the sandbox API is back; resuming")
			down = false
		}
		retry = 250 * time.Millisecond
		for _, a := range resp.JSON200.Data {
			if events.first(a) {
				line := forward(ctx, local, o.forwardTo, a)
				if ctx.Err() != nil {
					return nil // stopped mid-forward: not reported as forwarded
				}
				fmt.Fprintln(stdout, line)
			}
			after = a.Seq
		}
	}
	return nil
}

// forwardedEvents tells which logged attempts listen forwards: each event
// (each copy: a redelivery is a new one) once, by its first attempt that
// sent a body, as `stripe listen` forwards each event once whatever became
// of its deliveries.
type forwardedEvents struct {
	// seen are the events (their seq) forwarded so far.
	seen map[int64]bool
}

// first reports whether a is the attempt of its event to forward, and
// notes it.
func (f *forwardedEvents) first(a sandboxapi.WebhookAttempt) bool {
	if a.Body == "" || f.seen[a.Event.Seq] {
		return false // nothing to forward (the stand-in sent nothing), or a retry
	}
	if f.seen == nil {
		f.seen = map[int64]bool{}
	}
	f.seen[a.Event.Seq] = true
	return true
}

// forward posts one logged delivery to target with its signed headers and
// body, and returns the line that reports it.
func forward(ctx context.Context, c *http.Client, target string, a sandboxapi.WebhookAttempt) string {
	line := fmt.Sprintf("%s %s (attempt %d) ->", a.Event.Type, a.Event.Id, a.Attempt)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader([]byte(a.Body)))
	if err != nil {
		return fmt.Sprintf("%s error: %v", line, err)
	}
	for k, v := range a.Headers {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Sprintf("%s error: %v", line, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	return fmt.Sprintf("%s %d %s", line, resp.StatusCode, http.StatusText(resp.StatusCode))
}

func ptrTo[T any](v T) *T { return &v }
