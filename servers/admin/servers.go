package admin

import (
	"context"
	"crypto/ed25519"
	"time"

	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/restaurant"
	"github.com/apistack/apistack/servers/storage"
)

// The admin API reaches each server through the operator calls it makes,
// not through the servers' whole surface (their generated handlers among
// it): *pam.Operator (a PAM server's Operator()), *fax.Operator,
// *storage.Server and *restaurant.Server satisfy these.

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
	Archive(ctx context.Context, restaurantGUID, resource, guid string) error
	Remove(ctx context.Context, restaurantGUID, resource, guid string) error
}

var (
	_ PAM        = (*pam.Operator)(nil)
	_ Fax        = (*fax.Operator)(nil)
	_ Storage    = (*storage.Server)(nil)
	_ Restaurant = (*restaurant.Server)(nil)
)
