package sandbox_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/internal/tenantapi"
	restaurantserver "github.com/apistack/apistack/servers/restaurant"
)

// expireLogs is a lifecycle configuration for a bucket without versioning.
const expireLogs = `<LifecycleConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Rule><ID>expire-logs</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>30</Days></Expiration></Rule></LifecycleConfiguration>`

// noncurrent is one for a versioned bucket.
const noncurrent = `<LifecycleConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Rule><ID>old-versions</ID><Filter><Prefix></Prefix></Filter><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>7</NoncurrentDays></NoncurrentVersionExpiration></Rule></LifecycleConfiguration>`

const storageFixture = `{"storage": {
	"buckets": [{"name": "logs", "lifecycle": "` + expireLogs + `"}, {"name": "archive", "versioning": "Enabled", "lifecycle": "` + noncurrent + `"}, {"name": "empty"}],
	"keys": ["ci"]
}}`

// storageKeyClient is a storage client on the key the fixture named name.
func (e *env) storageKeyClient(t testing.TB, b *box, name string) *tenantapi.StorageClient {
	t.Helper()
	require.NotNil(t, b.FixtureCredentials)
	require.NotNil(t, b.FixtureCredentials.Storage)
	k, ok := (*b.FixtureCredentials.Storage.Keys)[name]
	require.True(t, ok, "key %q", name)
	return tenantapi.NewStorage(t, b.Credentials.Storage.Endpoint, b.Credentials.Storage.Region, k.KeyId, k.Secret, e.clock.Now)
}

// bucketOf is the name of the bucket the fixture of b called name.
func bucketOf(t testing.TB, b *box, name string) string {
	t.Helper()
	require.NotNil(t, b.FixtureCredentials)
	require.NotNil(t, b.FixtureCredentials.Storage)
	got, ok := (*b.FixtureCredentials.Storage.Buckets)[name]
	require.True(t, ok, "bucket %q", name)
	return got
}

// checkStorageFixture checks, through b's clients, what storageFixture made.
func (e *env) checkStorageFixture(t testing.TB, b *box) {
	t.Helper()
	ctx := context.Background()
	logs, archive := bucketOf(t, b, "logs"), bucketOf(t, b, "archive")
	assert.Equal(t, b.Id+"-logs", logs, "bucket names are global: the sandbox's own")
	for _, c := range []*tenantapi.StorageClient{b.storage, e.storageKeyClient(t, b, "ci")} {
		cfg, err := c.GetLifecycle(ctx, logs)
		require.NoError(t, err)
		require.Len(t, cfg.Rules, 1)
		assert.Equal(t, "expire-logs", *cfg.Rules[0].ID)
		cfg, err = c.GetLifecycle(ctx, archive)
		require.NoError(t, err)
		assert.Equal(t, "old-versions", *cfg.Rules[0].ID)
		_, err = c.GetLifecycle(ctx, bucketOf(t, b, "empty"))
		assert.Equal(t, http.StatusNotFound, statusOf(err), "a bucket without lifecycle: %v", err)
	}
	// Versioning is the fixture's: a rule on noncurrent versions is refused
	// on the unversioned bucket, taken on the versioned one.
	rules, err := b.storage.GetLifecycleXML(ctx, archive)
	require.NoError(t, err)
	assert.NoError(t, b.storage.PutLifecycle(ctx, archive, rules))
	assert.Equal(t, http.StatusBadRequest, statusOf(b.storage.PutLifecycle(ctx, logs, rules)))
}

func TestFixtures_StorageSectionCreatesBucketsVersioningLifecycleAndKeys(t *testing.T) {
	e := start(t, envOptions{})
	e.checkStorageFixture(t, e.createFixture(t, storageFixture))
	// Another sandbox from the same fixture has buckets of its own.
	e.checkStorageFixture(t, e.createFixture(t, storageFixture))
}

// demoDocument is a generated restaurant configuration of n menu items.
func demoDocument(t testing.TB, n int) string {
	t.Helper()
	raw, err := json.Marshal(restaurantserver.Demo(restaurantserver.DemoOptions{MenuItems: n, Seed: 34}))
	require.NoError(t, err)
	return string(raw)
}

// menuItems lists the GUIDs of b's restaurant's menu items.
func menuItems(t testing.TB, b *box) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for item, err := range b.restaurant.ListMenuItems(context.Background(), nil) {
		require.NoError(t, err)
		out[item.Guid] = true
	}
	return out
}

func TestFixtures_RestaurantSectionImportsTheConfiguration(t *testing.T) {
	e := start(t, envOptions{})
	doc := demoDocument(t, 30)
	b := e.createFixture(t, `{"restaurant": `+doc+`}`)
	var parsed restaurantserver.Document
	require.NoError(t, json.Unmarshal([]byte(doc), &parsed))
	items := menuItems(t, b)
	for _, item := range parsed.MenuItems {
		assert.True(t, items[string(item.Guid)], "menu item %s of the fixture", item.Guid)
	}
	got, err := b.restaurant.GetMenuItem(context.Background(), string(parsed.MenuItems[0].Guid))
	require.NoError(t, err)
	assert.Equal(t, parsed.MenuItems[0].Name, got.Name)
}

func TestFixtures_BadStorageAndRestaurantSectionsAnswer400WithThePointerAndLeaveNoRows(t *testing.T) {
	e := start(t, envOptions{})
	e.create(t, sandboxapi.CreateSandboxRequest{})
	doc := demoDocument(t, 3)
	badDoc := strings.Replace(doc, `"menuItems":[{`, `"menuItems":[{"price":"free",`, 1)
	require.NotEqual(t, doc, badDoc)
	for _, c := range []struct {
		name, fixture, pointer string
	}{
		{"malformed XML", `{"storage": {"buckets": [{"name": "b1"}, {"name": "b2", "lifecycle": "<LifecycleConfiguration><Rule>"}]}}`, "/fixture/storage/buckets/1/lifecycle"},
		{"rule for versions on an unversioned bucket", `{"storage": {"buckets": [{"name": "b1", "lifecycle": "` + noncurrent + `"}]}}`, "/fixture/storage/buckets/0/lifecycle"},
		{"duplicate bucket", `{"storage": {"buckets": [{"name": "b1"}, {"name": "b1"}]}}`, "/fixture/storage/buckets/1/name"},
		{"bad bucket name", `{"storage": {"buckets": [{"name": "No_Such"}]}}`, "/fixture/storage/buckets/0/name"},
		{"bad restaurant entity", `{"pam": {"groups": [{"name": "g", "roles": []}]}, "restaurant": ` + badDoc + `}`, "/fixture/restaurant/menuItems/0/price"},
	} {
		t.Run(c.name, func(t *testing.T) { e.refusesFixture(t, c.fixture, c.pointer) })
	}
}

func TestSnapshots_AForkHoldsEveryAPIsState(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	doc := demoDocument(t, 20)
	orig := e.createFixture(t, `{"pam": {"groups": [{"name": "fx-group", "roles": ["end_user"]}]}, "storage": `+
		strings.TrimSuffix(strings.TrimPrefix(storageFixture, `{"storage": `), "}")+`, "restaurant": `+doc+`}`)
	snap := snapshot(t, orig)
	assert.ElementsMatch(t, []string{"pam", "fax", "storage", "restaurant"}, snap.Apis)
	a, b := e.fork(t, snap.Id), e.fork(t, snap.Id)
	for _, f := range []*box{a, b} {
		e.checkStorageFixture(t, f)
		assert.Equal(t, menuItems(t, orig), menuItems(t, f))
		assert.NotEqual(t, orig.Credentials.Restaurant.ClientSecret, f.Credentials.Restaurant.ClientSecret)
		assert.NotEqual(t, orig.Credentials.Storage.Secret, f.Credentials.Storage.Secret)
		// The original's credentials reach nothing of the fork's.
		_, err := orig.storage.GetLifecycle(ctx, bucketOf(t, f, "logs"))
		assert.Equal(t, http.StatusNotFound, statusOf(err), "the original's key on the fork's bucket: %v", err)
		_, err = orig.restaurant.ForRestaurant(f.Credentials.Restaurant.RestaurantGuid).GetTipWithholding(ctx)
		assert.Equal(t, http.StatusForbidden, statusOf(err))
	}
	// A write in one fork is not seen in the other.
	require.NoError(t, a.storage.DeleteLifecycle(ctx, bucketOf(t, a, "logs")))
	_, err := b.storage.GetLifecycle(ctx, bucketOf(t, b, "logs"))
	require.NoError(t, err)
	_, err = orig.storage.GetLifecycle(ctx, bucketOf(t, orig, "logs"))
	require.NoError(t, err)
}
