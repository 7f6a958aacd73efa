package sandbox_test

import (
	"testing"

	"github.com/apistack/apistack/servers/internal/tenantapi"
)

// expireTmp is a lifecycle configuration of one rule: objects under tmp/
// expire after 7 days.
const expireTmp = `<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Rule><ID>tmp</ID><Filter><Prefix>tmp/</Prefix></Filter>` +
	`<Status>Enabled</Status><Expiration><Days>7</Days></Expiration></Rule></LifecycleConfiguration>`

// apisOf signs in to every API of a sandbox with its credentials, through
// the generated clients (tenantapi), storage signing on the stack's clock.
func (e *env) apisOf(t testing.TB, b *box) *box {
	t.Helper()
	c := b.Credentials
	out := &box{CreatedSandbox: b.CreatedSandbox, api: b.api, inbox: b.inbox}
	out.pam = tenantapi.NewPAM(t, c.Pam.BaseUrl, c.Pam.Team, c.Pam.KeyId, c.Pam.KeySecret)
	out.fax = tenantapi.NewFax(t, c.Fax.BaseUrl, c.Fax.ApiKey)
	out.storage = tenantapi.NewStorage(t, c.Storage.Endpoint, c.Storage.Region, c.Storage.KeyId, c.Storage.Secret, e.clock.Now)
	out.restaurant = tenantapi.NewRestaurant(t, c.Restaurant.BaseUrl, c.Restaurant.ClientId, c.Restaurant.ClientSecret, c.Restaurant.RestaurantGuid)
	return out
}
