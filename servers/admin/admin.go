// Package admin is the operator's API of an apistack server
// (specs/admin/openapi.yaml): it creates the tenants, users and keys the
// public APIs authenticate, on every API the process serves. Each API's
// operations live in a file of their own (pam.go, ...).
package admin

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/gen/adminapi"
	"github.com/apistack/apistack/gen/adminserver"
	"github.com/apistack/apistack/servers/internal/apierror"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/internal/failguard"
	"github.com/apistack/apistack/servers/internal/rights"
	"github.com/apistack/apistack/servers/internal/telemetry"
	"github.com/apistack/apistack/servers/internal/validation"
)

// Config configures the admin API.
type Config struct {
	// Token is the admin bearer token; it must not be empty.
	Token string
	// PAM is the PAM server administered.
	PAM PAM
	// Restaurant is the restaurant configuration server administered; nil
	// answers its operations with not_found.
	Restaurant Restaurant
	// Storage is the storage server administered; nil answers its operations
	// with not_found.
	Storage Storage
	// Fax is the fax server administered; nil answers its operations with
	// not_found.
	Fax Fax
	// Logger receives logs; nil means slog.Default().
	Logger *slog.Logger
	// ValidateResponses checks every response against the spec.
	ValidateResponses bool
	// OnResponseViolation is called for a response that breaks the spec.
	OnResponseViolation func(r *http.Request, status int, err error)
	// ResponseChecks, when set, checks responses after sending them on its
	// bounded pool, sampling when it is saturated (apistack serve
	// --validate-responses); nil checks each response before sending it, so a
	// test hears of every violation before it sees the answer.
	ResponseChecks *validation.Background
	// Telemetry counts the server's requests and events for /metrics and
	// feeds the console's request log; nil records nothing.
	Telemetry *telemetry.Telemetry
	// WrongTokenBurst is how many wrong bearer tokens a source may send
	// before it is refused 429 (then one more per 6 seconds); 0 means 10.
	WrongTokenBurst int
	// WrongTokens, when set, is the guard of wrong tokens to use instead of
	// one of WrongTokenBurst's: the one the sandbox API on the same port
	// uses (sandbox.Config.WrongTokens), so a source's guesses count
	// together.
	WrongTokens *failguard.Guard
}

// Server is the admin API.
type Server struct {
	cfg       Config
	tokenHash [32]byte
	logger    *slog.Logger
	// wrongTokens limits the wrong bearer tokens of each source.
	wrongTokens *failguard.Guard
}

var _ adminserver.StrictServerInterface = (*Server)(nil)

// The body limits of the admin API, as its spec states them: a body over its
// operation's limit answers 413 unread when its Content-Length says so, and
// fails as soon as the limit is read past otherwise.
const (
	// MaxBodyBytes caps the body of every operation but the two below.
	MaxBodyBytes = 1 << 20
	// MaxConfigurationBytes caps a restaurant configuration import.
	MaxConfigurationBytes = 32 << 20
	// MaxInboundFaxBytes caps an inbound fax injection: a document of the fax
	// API's largest size (fax.MaxMediaBytes), base64-encoded in JSON.
	MaxInboundFaxBytes = 70 << 20
)

// New returns the admin API server.
func New(cfg Config) (*Server, error) {
	if cfg.Token == "" {
		return nil, errors.New("admin: Config.Token is empty")
	}
	if cfg.PAM == nil {
		return nil, errors.New("admin: Config.PAM is nil")
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	wrong := cfg.WrongTokens
	if wrong == nil {
		wrong = failguard.New(cfg.WrongTokenBurst, 0, nil)
	}
	return &Server{cfg: cfg, tokenHash: sha256.Sum256([]byte(cfg.Token)), logger: logger, wrongTokens: wrong}, nil
}

// Handler returns the admin API's HTTP handler, with the metrics at
// MetricsPath when Config.Telemetry is set.
func (s *Server) Handler() (http.Handler, error) {
	deps := descriptor.Deps{
		Logger: s.logger, Telemetry: s.cfg.Telemetry, ValidateResponses: s.cfg.ValidateResponses,
		OnResponseViolation: s.cfg.OnResponseViolation, ResponseChecks: s.cfg.ResponseChecks,
	}
	e, err := deps.Echo(apiserver.Config{
		Name:         "admin",
		Title:        "apistack admin API",
		ErrorHandler: s.errorHandler,
		MaxBodyBytes: MaxBodyBytes,
		// A configuration import is read entity by entity by its handler
		// (streamedImport), never held whole.
		Validation: validation.Options{StreamedBodies: map[string]bool{"ImportRestaurantConfiguration": true}},
		BodyLimits: map[string]int64{
			"ImportRestaurantConfiguration": MaxConfigurationBytes,
			"InjectFaxInbound":              MaxInboundFaxBytes,
		},
	}, adminserver.GetSpec, s.authenticate)
	if err != nil {
		return nil, err
	}
	spec, err := apiserver.Spec("admin", adminserver.GetSpec)
	if err != nil {
		return nil, fmt.Errorf("admin spec: %w", err)
	}
	if err := checkRights(spec); err != nil {
		return nil, err
	}
	adminserver.RegisterHandlers(e, streamedImport{
		ServerInterface: adminserver.NewStrictHandler(s, []adminserver.StrictMiddlewareFunc{s.servedOnly(spec)}),
		s:               s,
	})
	return s.guardTokens(s.withMetrics(e)), nil
}

// checkRights reads who may call each operation from the spec
// (x-apistack-roles) and refuses to serve one that the admin token may not
// call. The admin token is the API's only kind of caller, so once it is
// authenticated (authenticate) every operation the spec grants it is
// allowed: the spec's rights are enforced here, at start, rather than on
// every request.
func checkRights(spec *openapi3.T) error {
	table, err := rights.FromSpec(spec)
	if err != nil {
		return err
	}
	admin := table.Caller(adminRole)
	var refused []string
	for _, op := range table.Operations() {
		if !table.Allows(op, admin) {
			refused = append(refused, op)
		}
	}
	if len(refused) > 0 {
		return fmt.Errorf("admin: the spec lets no caller of this API call %s: list %q in their %s", strings.Join(refused, ", "), adminRole, rights.Extension)
	}
	return nil
}

// adminRole is the role of the admin token in the spec's role table.
const adminRole = "admin"

// authenticate checks the admin token, hashing both sides so the comparison
// takes the same time whatever the guess.
func (s *Server) authenticate(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	h := in.RequestValidationInput.Request.Header.Get("Authorization")
	if !strings.HasPrefix(h, "Bearer ") {
		return errors.New("an Authorization: Bearer <admin token> header is required")
	}
	if !s.bearerOK(h) {
		return errors.New("the admin token is wrong")
	}
	return nil
}

// apiError is an error the admin API answers with: its body has the code,
// the error name and the message, nothing more.
type apiError = apierror.Error[adminapi.ErrorError, struct{}]

func errBadRequest(format string, args ...any) *apiError {
	return apierror.New[adminapi.ErrorError, struct{}](http.StatusBadRequest, adminapi.ErrorErrorInvalidRequest, format, args...)
}

func errNotFound(format string, args ...any) *apiError {
	return apierror.New[adminapi.ErrorError, struct{}](http.StatusNotFound, adminapi.ErrorErrorNotFound, format, args...)
}

// errorHandler renders every error as the admin API's body; anything
// unexpected (a store error admin did not map) is logged and answered
// "internal" without its detail.
func (s *Server) errorHandler(err error, c echo.Context) {
	apierror.API[adminapi.ErrorError, struct{}]{
		Name: "admin", Logger: s.logger,
		FailureNames: apierror.FailureNames[adminapi.ErrorError]{
			Invalid: adminapi.ErrorErrorInvalidRequest, Unauthenticated: adminapi.ErrorErrorUnauthorized,
			UnsupportedMediaType: adminapi.ErrorErrorUnsupportedContentType, NotFound: adminapi.ErrorErrorNotFound,
			Timeout: adminapi.ErrorErrorRequestTimeout,
		},
		UnavailableName: adminapi.ErrorErrorUnavailable,
		InternalName:    adminapi.ErrorErrorInternal, InternalMessage: "an unexpected error occurred",
		Domain: fromStore,
		Render: func(c echo.Context, ae *apiError) error {
			return c.JSON(ae.Status, adminapi.Error{Code: ae.Status, Error: ae.Name, Message: ae.Message})
		},
	}.Handler()(err, c)
}
