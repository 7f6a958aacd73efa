// Package storage is the storage API server: it implements the strict server
// interface generated from specs/storage/openapi.yaml (the lifecycle
// configuration of a bucket) on an SQLite or PostgreSQL store. Every request is verified as
// CLOUD4-HMAC-SHA256 (protocol/sigv4, shared with the client), may be
// addressed path style or virtual-host style, and carries an XML body checked
// against specs/storage/lifecycle.xsd (internal/lifecycledoc) both by the
// spec validation and by the handler. Nothing is stored unless every check
// passes.
package storage

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/gen/storageapi"
	"github.com/apistack/apistack/gen/storageserver"
	"github.com/apistack/apistack/internal/lifecycledoc"
	"github.com/apistack/apistack/internal/xmlbody"
	"github.com/apistack/apistack/protocol/sigv4"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/cache"
	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/internal/secretbox"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/storeerr"
)

// Defaults of Config.
const (
	// DefaultRegion is the region requests are signed for.
	DefaultRegion = "local-1"
	// DefaultDomain is the domain of virtual-host-style addresses,
	// {bucket}.{region}.{domain}; *.localhost resolves to this machine.
	DefaultDomain = "localhost"
	// Service is the service name in the credential scope, as object storage's,
	// so that tooling with a custom signing provider works unchanged.
	Service = "s3"
)

// Deps are the dependencies every API's server takes alike.
type Deps = descriptor.Deps

// Config configures the storage server.
type Config struct {
	// Deps are the dependencies every API takes: DB, Clock, Logger,
	// validation, Hooks, Telemetry.
	Deps
	// MasterKey (MasterKeySize bytes, kept outside the database; see
	// LoadOrCreateMasterKey) seals the access-key secrets stored in DB.
	MasterKey []byte
	// Settings are the server's knobs (0: their defaults).
	Settings
	// DocumentBudget is how many bytes of signed request bodies the server
	// reads, checks and decodes at once (see documentBudget); 0 means
	// DefaultDocumentBudget.
	DocumentBudget int64
}

// Server is the storage API: Handler serves it, and its exported methods are
// the generated server's handlers. The operator's calls are on Operator(),
// the web console's reads on Console().
type Server struct {
	cfg      Config
	store    *store
	clock    clock.Clock
	logger   *slog.Logger
	verifier sigv4.Verifier
	// keys caches access keys' secrets (unsealed) and accounts, dropped when
	// a key is deleted (store.revoked).
	keys *cache.Cache[accessKey]
	// documents bounds the request bodies read, validated and decoded at once.
	documents *documentBudget
}

var _ storageserver.StrictServerInterface = (*Server)(nil)

// New returns a storage server on cfg.DB.
func New(cfg Config) (*Server, error) {
	if cfg.DB == nil {
		return nil, errors.New("storage: Config.DB is nil")
	}
	descriptor.ApplyDefaults(&cfg.Settings)
	// The spec validation reads the API's XML bodies with xmlbody.Decoder.
	xmlbody.Register()
	cfg.Deps = cfg.Deps.WithDefaults()
	box, err := secretbox.New(cfg.MasterKey)
	if err != nil {
		return nil, err
	}
	db := sqldb.New(cfg.DB, sqldb.Options{SerializeWrites: true})
	// The key cache follows the database: dropped after this replica's
	// revocations and after every commit another replica makes (Follow),
	// and bypassed while this replica cannot hear those.
	s := &Server{cfg: cfg, store: &store{db: db, box: box}, clock: cfg.Clock, logger: cfg.Logger,
		keys: cache.New[accessKey](keyCacheSize, keyCacheTTL), documents: newDocumentBudget(cfg.DocumentBudget)}
	s.store.revoked = s.keys.Invalidate
	db.Follow(s.keys)
	s.verifier = sigv4.Verifier{
		Scheme:  sigv4.Cloud4,
		Region:  cfg.Region,
		Service: Service,
		Secret:  s.keySecret,
	}
	return s, nil
}

// Handler returns the HTTP handler of the API: the generated routes behind
// virtual-host rewriting, signature verification and spec validation, plus
// /healthz, /openapi.yaml and /docs/.
func (s *Server) Handler() (http.Handler, error) {
	e, err := s.cfg.Echo(apiserver.Config{
		Name:  "storage",
		Title: "apistack storage API",
		// The signature is checked before the spec validation reads the body.
		Before:       []echo.MiddlewareFunc{s.authenticateFirst},
		ErrorHandler: s.errorHandler,
		MaxBodyBytes: lifecycledoc.MaxBodySize,
	}, storageserver.GetSpec, s.authenticate)
	if err != nil {
		return nil, err
	}
	// Addressing runs before echo routes the request, so that a virtual-host
	// address is routed as its path-style equivalent.
	e.Pre(s.addressing)
	storageserver.RegisterHandlers(e, storageserver.NewStrictHandler(s, nil))
	return e, nil
}

// PutLifecycle replaces a bucket's lifecycle configuration.
func (s *Server) PutLifecycle(ctx context.Context, req storageserver.PutLifecycleRequestObject) (storageserver.PutLifecycleResponseObject, error) {
	b, err := s.bucket(ctx, req.Bucket)
	if err != nil {
		return nil, err
	}
	// The body is the one the spec validation read and checked; parsing it again
	// with the same validator gives the same configuration, now held to the
	// rules that depend on the bucket.
	cfg, err := lifecycledoc.Parse(req.Body, b.Versioning.Versioned())
	if err != nil {
		return nil, err
	}
	doc, err := lifecycledoc.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	if err := s.store.putLifecycle(ctx, b.Name, doc, s.clock.Now()); err != nil {
		return nil, err
	}
	return storageserver.PutLifecycle200Response{Headers: storageserver.PutLifecycle200ResponseHeaders{XCloudRequestId: requestID(ctx)}}, nil
}

// GetLifecycle returns a bucket's lifecycle configuration as stored.
func (s *Server) GetLifecycle(ctx context.Context, req storageserver.GetLifecycleRequestObject) (storageserver.GetLifecycleResponseObject, error) {
	b, err := s.bucket(ctx, req.Bucket)
	if err != nil {
		return nil, err
	}
	doc, err := s.store.lifecycle(ctx, b.Name)
	if errors.Is(err, storeerr.ErrNotFound) {
		return nil, newError(http.StatusNotFound, storageapi.ErrorCodeNoSuchLifecycleConfiguration, "/"+b.Name,
			"the bucket '%s' has no lifecycle configuration", b.Name)
	}
	if err != nil {
		return nil, err
	}
	return storageserver.GetLifecycle200ApplicationxmlResponse{
		Body:          bytesReader(doc),
		ContentLength: int64(len(doc)),
		Headers:       storageserver.GetLifecycle200ResponseHeaders{XCloudRequestId: requestID(ctx)},
	}, nil
}

// DeleteLifecycle removes a bucket's lifecycle configuration, if it has one.
func (s *Server) DeleteLifecycle(ctx context.Context, req storageserver.DeleteLifecycleRequestObject) (storageserver.DeleteLifecycleResponseObject, error) {
	b, err := s.bucket(ctx, req.Bucket)
	if err != nil {
		return nil, err
	}
	if err := s.store.deleteLifecycle(ctx, b.Name); err != nil {
		return nil, err
	}
	return storageserver.DeleteLifecycle204Response{Headers: storageserver.DeleteLifecycle204ResponseHeaders{XCloudRequestId: requestID(ctx)}}, nil
}

// bucket returns the named bucket if the request's key may act on it: a key
// acts on its own account's buckets only. Another account's bucket answers
// as a bucket that does not exist, NoSuchBucket, with the same message: a
// key learns nothing of the buckets it may not use, not even that they
// exist (the sandboxes' buckets are named after their ids).
func (s *Server) bucket(ctx context.Context, name string) (Bucket, error) {
	b, err := s.store.bucket(ctx, name)
	if err != nil && !errors.Is(err, storeerr.ErrNotFound) {
		return Bucket{}, err
	}
	st := stateFrom(ctx)
	if err != nil || st == nil || st.account == "" || st.account != b.Account {
		return Bucket{}, newError(http.StatusNotFound, storageapi.ErrorCodeNoSuchBucket, "/"+name,
			"the bucket '%s' does not exist, or is not the key's account's", name)
	}
	return b, nil
}

// now is the server's clock, for the verifier.
func (s *Server) now() time.Time { return s.clock.Now() }
