package schemacheck_test

import (
	"context"
	"io/fs"
	"sort"
	"testing"

	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/internal/schemacheck"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/restaurant"
	"github.com/apistack/apistack/servers/sandbox"
	"github.com/apistack/apistack/servers/storage"
)

// rateLimits is the table of the rate-limited APIs (PAM, restaurant, fax,
// sandbox) on PostgreSQL alone.
const rateLimits = "table rate_limits: only on postgres"

// rateLimitsReason says why.
const rateLimitsReason = "the rate limiters' buckets are shared by the replicas in PostgreSQL " +
	"(ratelimit.SQLStore); one SQLite process keeps them in memory"

// allowed are the differences between an API's two schemas that must be
// there, each with its reason. Anything else is drift: fix it with a new
// migration in the set that lacks it.
var allowed = map[string]map[string]string{
	"pam":        {rateLimits: rateLimitsReason},
	"fax":        {rateLimits: rateLimitsReason},
	"storage":    {},
	"restaurant": {rateLimits: rateLimitsReason},
	"sandbox":    {rateLimits: rateLimitsReason},
}

// apis are every API's migrations, both dialects.
func apis() []testdb.Migrations {
	return []testdb.Migrations{
		pam.API.Migrations(),
		fax.API.Migrations(),
		storage.API.Migrations(),
		restaurant.API.Migrations(),
		{Schema: "sandbox", SQLite: sandbox.Migrations(), Postgres: sandbox.PostgresMigrations()},
	}
}

// released are the goose versions of each API's migrations that releases
// have applied, SQLite's then PostgreSQL's. goose records the versions a
// database has applied, not the files' names, so each keeps its number for
// good (and builds the same schema: the drift test above, the release's data
// directory): a database of an earlier release then opens as it is and
// applies what came since. PAM's and storage's PostgreSQL sets start from a
// squashed snapshot, so their versions are not SQLite's.
var released = map[string][2][]int64{
	"pam":        {{1, 2, 3, 4, 5}, {1, 2}},
	"fax":        {{1, 2, 3, 30}, {1, 2, 3, 30}},
	"storage":    {{1, 2, 3, 4}, {1, 2}},
	"restaurant": {{1, 2}, {1, 2}},
	"sandbox":    {{1, 10, 20, 40}, {1, 10, 20, 40}},
}

// TestMigrations_KeepTheReleasedVersions: a new migration adds a version
// after the released ones; none of theirs is renumbered or gone.
func TestMigrations_KeepTheReleasedVersions(t *testing.T) {
	for _, m := range apis() {
		t.Run(m.Schema, func(t *testing.T) {
			for i, set := range []fs.FS{m.SQLite, m.Postgres} {
				names, err := fs.Glob(set, "*.sql")
				require.NoError(t, err)
				var versions []int64
				for _, name := range names {
					v, err := goose.NumericComponent(name)
					require.NoError(t, err)
					versions = append(versions, v)
				}
				want := released[m.Schema][i]
				require.GreaterOrEqual(t, len(versions), len(want), "%s %s", m.Schema, []string{"sqlite", "postgres"}[i])
				assert.Equal(t, want, versions[:len(want)], "%s %s", m.Schema, []string{"sqlite", "postgres"}[i])
			}
		})
	}
}

// TestMigrations_BothDialectsBuildTheSameSchema migrates each API's SQLite
// and PostgreSQL sets and compares, per table, the columns (type family and
// nullability), the primary key, the unique keys and the indexes.
func TestMigrations_BothDialectsBuildTheSameSchema(t *testing.T) {
	ctx := context.Background()
	for _, m := range apis() {
		t.Run(m.Schema, func(t *testing.T) {
			lite, err := schemacheck.ReadSQLite(ctx, testdb.OpenOn(t, testdb.SQLite, m))
			require.NoError(t, err)
			pg, err := schemacheck.ReadPostgres(ctx, testdb.OpenOn(t, testdb.Postgres, m))
			require.NoError(t, err)
			require.NotEmpty(t, lite)
			require.NotEmpty(t, pg)

			diff := schemacheck.Diff("sqlite", lite, "postgres", pg)
			var drift, gone []string
			for _, d := range diff {
				if _, ok := allowed[m.Schema][d]; !ok {
					drift = append(drift, d)
				}
			}
			for d := range allowed[m.Schema] {
				if !contains(diff, d) {
					gone = append(gone, d)
				}
			}
			sort.Strings(gone)
			assert.Empty(t, drift, "the two migration sets of %s drifted apart", m.Schema)
			assert.Empty(t, gone, "allowed differences of %s that are no more: remove them from the list", m.Schema)
		})
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
