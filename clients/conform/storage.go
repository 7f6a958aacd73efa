package conform

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/apistack/apistack/clients/storage"
	"github.com/apistack/apistack/gen/lifecycle"
	"github.com/apistack/apistack/internal/replay"
	"github.com/apistack/apistack/protocol/contract"
	"github.com/apistack/apistack/protocol/sigv4"
)

// storageChecker holds what the storage checks share.
type storageChecker struct {
	// x sends through the contract only; signed wraps it in a signer.
	x     *exchange
	creds StorageCredentials
}

func storageSuite(cfg Config) ([]check, func(), error) {
	if cfg.Credentials.Storage == nil {
		return nil, nil, errors.New("the credentials have no storage section")
	}
	creds := *cfg.Credentials.Storage
	if cfg.BaseURL != "" {
		creds.Endpoint = cfg.BaseURL
	}
	if creds.Region == "" || creds.KeyID == "" || creds.Secret == "" || creds.Bucket == "" {
		return nil, nil, errors.New("the storage section needs region, key_id, secret and bucket")
	}
	x, err := newExchange(contract.Storage, creds.Endpoint, cfg.Transport)
	if err != nil {
		return nil, nil, fmt.Errorf("storage: %w", err)
	}
	s := &storageChecker{x: x, creds: creds}
	return []check{
		{"lifecycle-round-trip", s.checkRoundTrip},
		{"get-after-delete", s.checkGetAfterDelete},
		{"signature-wrong-secret", s.checkWrongSecret},
		{"signature-unknown-key", s.checkUnknownKey},
		{"signature-clock-skew", s.checkClockSkew},
		{"signature-body-hash-mismatch", s.checkBodyHashMismatch},
		{"malformed-xml", s.checkMalformedXML},
	}, func() {}, nil
}

// signing says how a request is signed.
type signing struct {
	keyID, secret string
	now           func() time.Time
	// tamper changes the body after it was signed (same length, so only the
	// payload hash disagrees).
	tamper bool
}

func (s *storageChecker) signed(sg signing) *exchange {
	if sg.keyID == "" {
		sg.keyID = s.creds.KeyID
	}
	if sg.secret == "" {
		sg.secret = s.creds.Secret
	}
	wrap := func(c *http.Client) *http.Client {
		next := c.Transport
		if sg.tamper {
			next = tamperBody{next: next}
		}
		return &http.Client{CheckRedirect: c.CheckRedirect, Transport: &storage.Signer{
			Scheme:      sigv4.Cloud4,
			Credentials: sigv4.Credentials{AccessKeyID: sg.keyID, SecretAccessKey: sg.secret},
			Region:      s.creds.Region,
			Service:     storage.Service,
			Now:         sg.now,
			Next:        next,
		}}
	}
	return &exchange{base: s.x.base, strict: wrap(s.x.strict), lenient: wrap(s.x.lenient)}
}

// tamperBody upper-cases the first lower-case letter of the body's rule ID
// after the request was signed.
type tamperBody struct{ next http.RoundTripper }

func (t tamperBody) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := replay.ReadBody(req)
	if err != nil {
		return nil, err
	}
	changed := bytes.Replace(body, []byte("<ID>conform"), []byte("<ID>CONFORM"), 1)
	return t.next.RoundTrip(replay.WithBody(req, changed))
}

func (s *storageChecker) lifecyclePath() string {
	return "/" + url.PathEscape(s.creds.Bucket) + "?lifecycle="
}

func (s *storageChecker) call(ctx context.Context, x *exchange, op, method string, body []byte, badInput bool) (*response, error) {
	h := header("Accept", "application/xml")
	if body != nil {
		h.Set("Content-Type", "application/xml")
	}
	return x.send(ctx, request{op: op, method: method, path: s.lifecyclePath(), header: h, body: body, badInput: badInput})
}

// configuration is a one-rule document with a fresh rule ID.
func configuration(days int32) (id string, doc []byte) {
	id = uniqueName("conform-")
	doc, err := storage.MarshalConfiguration(storage.Configuration(storage.ExpireAfterDays(id, "conform/", days)))
	if err != nil {
		panic(err) // a fixed, valid document always marshals
	}
	return id, doc
}

// expectStorageError checks an error answer: the status and an XML <Error>
// with the code wanted and a message.
func expectStorageError(op string, r *response, status int, code string) error {
	if r.status != status {
		return fmt.Errorf("%s: want %d %s, got %d: %s", op, status, code, r.status, snippet(r.body))
	}
	var e struct {
		XMLName   xml.Name `xml:"Error"`
		Code      string   `xml:"Code"`
		Message   string   `xml:"Message"`
		RequestID string   `xml:"RequestId"`
	}
	if err := xml.Unmarshal(r.body, &e); err != nil {
		return fmt.Errorf("%s: the answer is not an XML <Error>: %w: %s", op, err, snippet(r.body))
	}
	switch {
	case e.Code != code:
		return fmt.Errorf("%s: want code %s, got %q (%s)", op, code, e.Code, e.Message)
	case e.Message == "":
		return fmt.Errorf("%s: <Error> %s without a <Message>", op, code)
	}
	return nil
}

// saved is the bucket's configuration before a check changed it.
type saved struct {
	doc []byte // nil when there was none
}

// save reads the bucket's configuration so the check can restore it.
func (s *storageChecker) save(ctx context.Context) (saved, error) {
	r, err := s.call(ctx, s.signed(signing{}), "GetLifecycle", http.MethodGet, nil, false)
	if err != nil {
		return saved{}, err
	}
	switch r.status {
	case http.StatusOK:
		return saved{doc: r.body}, nil
	case http.StatusNotFound:
		return saved{}, expectStorageError("GetLifecycle of the bucket before the check", r, http.StatusNotFound, "NoSuchLifecycleConfiguration")
	}
	return saved{}, fmt.Errorf("GetLifecycle of bucket %s: %d: %s", s.creds.Bucket, r.status, snippet(r.body))
}

// restore puts the saved configuration back (or removes the check's).
func (s *storageChecker) restore(sv saved) {
	ctx, cancel := cleanupContext()
	defer cancel()
	x := s.signed(signing{})
	if sv.doc == nil {
		_, _ = s.call(ctx, x, "DeleteLifecycle", http.MethodDelete, nil, false)
		return
	}
	_, _ = s.call(ctx, x, "PutLifecycle", http.MethodPut, sv.doc, true)
}

func (s *storageChecker) checkRoundTrip(ctx context.Context) (string, error) {
	sv, err := s.save(ctx)
	if err != nil {
		return "", err
	}
	defer s.restore(sv)
	x := s.signed(signing{})
	id, doc := configuration(30)
	put, err := s.call(ctx, x, "PutLifecycle", http.MethodPut, doc, false)
	if err != nil {
		return "", err
	}
	if err := put.expectStatus("PutLifecycle", http.StatusOK); err != nil {
		return "", err
	}
	get, err := s.call(ctx, x, "GetLifecycle", http.MethodGet, nil, false)
	if err != nil {
		return "", err
	}
	if err := get.expectStatus("GetLifecycle after PutLifecycle", http.StatusOK); err != nil {
		return "", err
	}
	var cfg lifecycle.LifecycleConfiguration
	if err := xml.NewDecoder(bytes.NewReader(get.body)).Decode(&cfg); err != nil {
		return "", fmt.Errorf("GetLifecycle: the answer is not a LifecycleConfiguration: %w", err)
	}
	if err := sameRule(cfg, id, 30); err != nil {
		return "", fmt.Errorf("GetLifecycle after PutLifecycle: %w", err)
	}
	del, err := s.call(ctx, x, "DeleteLifecycle", http.MethodDelete, nil, false)
	if err != nil {
		return "", err
	}
	if err := del.expectStatus("DeleteLifecycle", http.StatusNoContent); err != nil {
		return "", err
	}
	return fmt.Sprintf("PUT 200, GET 200 with rule %s (Expiration 30 days), DELETE 204 on %s", id, s.creds.Bucket), nil
}

// sameRule checks that cfg is the one-rule document configuration wrote:
// both written out (the schema's order, as the client's marshaller writes
// it) are the same bytes.
func sameRule(cfg lifecycle.LifecycleConfiguration, id string, days int32) error {
	got, err := xml.Marshal(&cfg)
	if err != nil {
		return fmt.Errorf("the configuration read back does not marshal: %w", err)
	}
	got = append([]byte(xml.Header), got...)
	want, err := storage.MarshalConfiguration(storage.Configuration(storage.ExpireAfterDays(id, "conform/", days)))
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("read back %s, put %s", got, want)
	}
	return nil
}

func (s *storageChecker) checkGetAfterDelete(ctx context.Context) (string, error) {
	sv, err := s.save(ctx)
	if err != nil {
		return "", err
	}
	defer s.restore(sv)
	x := s.signed(signing{})
	_, doc := configuration(7)
	put, err := s.call(ctx, x, "PutLifecycle", http.MethodPut, doc, false)
	if err != nil {
		return "", err
	}
	if err := put.expectStatus("PutLifecycle", http.StatusOK); err != nil {
		return "", err
	}
	del, err := s.call(ctx, x, "DeleteLifecycle", http.MethodDelete, nil, false)
	if err != nil {
		return "", err
	}
	if err := del.expectStatus("DeleteLifecycle", http.StatusNoContent); err != nil {
		return "", err
	}
	get, err := s.call(ctx, x, "GetLifecycle after DeleteLifecycle", http.MethodGet, nil, false)
	if err != nil {
		return "", err
	}
	if err := expectStorageError("GetLifecycle after DeleteLifecycle", get, http.StatusNotFound, "NoSuchLifecycleConfiguration"); err != nil {
		return "", err
	}
	return "GET after DELETE: 404 NoSuchLifecycleConfiguration", nil
}

// refused sends a PUT signed as sg and expects the error code; the bucket's
// configuration must not change.
func (s *storageChecker) refused(ctx context.Context, sg signing, op string, body []byte, badInput bool, status int, code string) (string, error) {
	before, err := s.save(ctx)
	if err != nil {
		return "", err
	}
	if body == nil {
		_, body = configuration(30)
	}
	r, err := s.call(ctx, s.signed(sg), op, http.MethodPut, body, badInput)
	if err != nil {
		return "", err
	}
	if err := expectStorageError(op, r, status, code); err != nil {
		s.restore(before)
		return "", err
	}
	after, err := s.save(ctx)
	if err != nil {
		return "", err
	}
	if !bytes.Equal(before.doc, after.doc) {
		s.restore(before)
		return "", fmt.Errorf("%s: answered %s, but the bucket's configuration changed", op, code)
	}
	return fmt.Sprintf("%d %s in an XML <Error>; nothing stored", status, code), nil
}

func (s *storageChecker) checkWrongSecret(ctx context.Context) (string, error) {
	return s.refused(ctx, signing{secret: s.creds.Secret + "x"}, "PutLifecycle signed with a wrong secret", nil, false, http.StatusForbidden, "SignatureDoesNotMatch")
}

func (s *storageChecker) checkUnknownKey(ctx context.Context) (string, error) {
	return s.refused(ctx, signing{keyID: uniqueName("CONFORMUNKNOWN")}, "PutLifecycle signed with an unknown key", nil, false, http.StatusForbidden, "InvalidAccessKeyId")
}

func (s *storageChecker) checkClockSkew(ctx context.Context) (string, error) {
	skewed := func() time.Time { return time.Now().Add(-20 * time.Minute) }
	return s.refused(ctx, signing{now: skewed}, "PutLifecycle dated 20 minutes ago", nil, false, http.StatusForbidden, "RequestTimeTooSkewed")
}

func (s *storageChecker) checkBodyHashMismatch(ctx context.Context) (string, error) {
	return s.refused(ctx, signing{tamper: true}, "PutLifecycle whose body changed after signing", nil, false, http.StatusBadRequest, "XCloudContentSHA256Mismatch")
}

func (s *storageChecker) checkMalformedXML(ctx context.Context) (string, error) {
	bodies := map[string][]byte{
		"not XML":              []byte("this is not XML"),
		"unclosed element":     []byte(`<LifecycleConfiguration><Rule><ID>x</ID>`),
		"unknown root element": []byte(`<Lifecycle><Rule/></Lifecycle>`),
	}
	var details []string
	for _, name := range []string{"not XML", "unclosed element", "unknown root element"} {
		if _, err := s.refused(ctx, signing{}, "PutLifecycle with "+name, bodies[name], true, http.StatusBadRequest, "MalformedXML"); err != nil {
			return "", err
		}
		details = append(details, name)
	}
	return strings.Join(details, ", ") + ": 400 MalformedXML in an XML <Error>; nothing stored", nil
}
