package admin

import (
	"context"
	"crypto/ed25519"
	"io"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/gen/adminserver"
	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/restaurant"
	"github.com/apistack/apistack/servers/storage"
)

// The admin API reaches each server through the operator calls it makes,
// not through the servers' whole surface (their generated handlers among
// it): each server's Operator() (*pam.Operator, *fax.Operator,
// *storage.Operator, *restaurant.Operator) satisfies these.

// PAM is the PAM server's operator calls.
type PAM interface {
	CreateTeam(ctx context.Context, name string) (pam.Team, error)
	Team(ctx context.Context, name string) (pam.Team, error)
	SetTeamDisabled(ctx context.Context, name string, disabled bool) (pam.Team, error)
	BootstrapServiceUser(ctx context.Context, teamName, userName, groupName string, roles []string, keyTTL time.Duration) (pam.ServiceUserCredentials, error)
	CreateHumanUser(ctx context.Context, teamName, name string) (pam.User, error)
	TeamQuotas(ctx context.Context, teamName string) (pam.Quotas, error)
	SetQuotas(ctx context.Context, teamName string, q pam.Quotas) error
	Offline() bool
	SetOffline(ctx context.Context, offline bool) error
}

// Fax is the fax server's operator calls.
type Fax interface {
	CreateAccount(ctx context.Context, name string) (fax.Account, error)
	AccountByName(ctx context.Context, name string) (fax.Account, error)
	IssueAPIKey(ctx context.Context, accountID string) (keyID, key string, err error)
	RotateAPIKey(ctx context.Context, accountID, replacedKeyID string) (keyID, key string, err error)
	RevokeAPIKey(ctx context.Context, accountID, keyID string) error
	CreateOutboundVoiceProfile(ctx context.Context, accountID, name string) (string, error)
	CreateApplication(ctx context.Context, a fax.Application) (fax.Application, error)
	AssignNumber(ctx context.Context, accountID, phoneNumber, applicationID string) error
	InjectInbound(ctx context.Context, in fax.InboundFax) (string, error)
	WebhookPublicKey() ed25519.PublicKey
	WebhookStats(ctx context.Context) (pending, delivered, abandoned int, err error)
}

// Storage is the storage server's operator calls.
type Storage interface {
	CreateBucket(ctx context.Context, account, name string, v storage.Versioning) (storage.Bucket, error)
	Bucket(ctx context.Context, name string) (storage.Bucket, error)
	Buckets(ctx context.Context) ([]storage.Bucket, error)
	SetVersioning(ctx context.Context, name string, v storage.Versioning) (storage.Bucket, error)
	DeleteBucket(ctx context.Context, name string) error
	CreateKey(ctx context.Context, account, description string) (storage.AccessKey, error)
	Keys(ctx context.Context) ([]storage.AccessKey, error)
	DeleteKey(ctx context.Context, keyID string) error
}

// Restaurant is the restaurant server's operator calls.
type Restaurant interface {
	CreateRestaurant(ctx context.Context, guid, name string) (restaurant.Restaurant, error)
	Restaurant(ctx context.Context, guid string) (restaurant.Restaurant, error)
	Counts(ctx context.Context, restaurantGUID string) (map[string]int, error)
	CreateClient(ctx context.Context, name string, restaurants []string) (restaurant.ClientCredentials, error)
	Import(ctx context.Context, restaurantGUID string, document []byte) (restaurant.ImportResult, error)
	ImportFrom(ctx context.Context, restaurantGUID string, document io.Reader) (restaurant.ImportResult, error)
	Archive(ctx context.Context, restaurantGUID, resource, guid string) error
	Remove(ctx context.Context, restaurantGUID, resource, guid string) error
}

var (
	_ PAM        = (*pam.Operator)(nil)
	_ Fax        = (*fax.Operator)(nil)
	_ Storage    = (*storage.Operator)(nil)
	_ Restaurant = (*restaurant.Operator)(nil)
)

// notServed are the answers to an operation of an API this process does not
// serve, by API (the operation's tag in the spec).
var notServed = map[string]string{
	"fax":        "the fax API is not served by this process",
	"restaurant": "the restaurant API is not served by this process",
	"storage":    "this server runs no storage API",
}

// serves reports whether this process serves the API a tag names (PAM, and
// the admin API's own operations, always).
func (s *Server) serves(api string) bool {
	switch api {
	case "fax":
		return s.cfg.Fax != nil
	case "restaurant":
		return s.cfg.Restaurant != nil
	case "storage":
		return s.cfg.Storage != nil
	}
	return true
}

// servedOnly answers 404 to every operation of an API this process does not
// serve before its handler runs, so that a handler uses its API's server as
// Config gives it.
func (s *Server) servedOnly(spec *openapi3.T) adminserver.StrictMiddlewareFunc {
	apis := map[string]string{} // operation ID: the API its tag names
	for _, item := range spec.Paths.Map() {
		for _, op := range item.Operations() {
			if len(op.Tags) > 0 {
				apis[op.OperationID] = op.Tags[0]
			}
		}
	}
	return func(f adminserver.StrictHandlerFunc, operationID string) adminserver.StrictHandlerFunc {
		api := apis[operationID]
		return func(c echo.Context, req any) (any, error) {
			if !s.serves(api) {
				return nil, errNotFound("%s", notServed[api])
			}
			return f(c, req)
		}
	}
}
