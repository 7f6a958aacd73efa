package storage_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients/storage"
	"github.com/apistack/apistack/internal/lifecycledoc"
)

const xsdPath = "../../specs/storage/lifecycle.xsd"

// built returns a configuration made of every builder, and one of each kind of
// bucket that the service accepts.
func built() map[string]*storage.LifecycleConfiguration {
	return map[string]*storage.LifecycleConfiguration{
		"plain": storage.Configuration(
			storage.ExpireAfterDays("logs", "logs/", 30),
			storage.ExpireOn("archive", "archive/", time.Date(2027, 1, 1, 15, 4, 5, 0, time.FixedZone("CET", 3600))),
			storage.AbortIncompleteUploadsAfterDays("", "", 7),
		),
		"versioned": storage.Configuration(
			storage.ExpireNoncurrentAfterDays("old-versions", "docs/", 30, 3),
			storage.ExpireNoncurrentAfterDays("all-versions", "", 90, 0),
			storage.AbortIncompleteUploadsAfterDays("uploads", "uploads/", 2),
		),
		"escaped": storage.Configuration(storage.ExpireAfterDays(`a&b<"c">`, "q&a/☺/", 1)),
	}
}

func TestBuilders_MarshalWhatXmllintValidates(t *testing.T) {
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Skip("xmllint is not installed (Debian package libxml2-utils); this check needs it as the reference validator")
	}
	dir := t.TempDir()
	for name, cfg := range built() {
		t.Run(name, func(t *testing.T) {
			body, err := storage.MarshalConfiguration(cfg)
			require.NoError(t, err)
			file := filepath.Join(dir, name+".xml")
			require.NoError(t, os.WriteFile(file, body, 0o600))
			out, err := exec.Command(xmllint, "--noout", "--nonet", "--schema", xsdPath, file).CombinedOutput()
			assert.NoError(t, err, "xmllint:\n%s\n%s", out, body)
		})
	}
}

func TestBuilders_BuildWhatTheServiceAccepts(t *testing.T) {
	for name, cfg := range built() {
		t.Run(name, func(t *testing.T) {
			body, err := storage.MarshalConfiguration(cfg)
			require.NoError(t, err)
			decoded, err := lifecycledoc.Decode(body)
			require.NoError(t, err, "%s", body)
			assert.NoError(t, lifecycledoc.Check(decoded, name == "versioned"))
		})
	}
}

func TestExpireOn_UsesMidnightUTCOfTheDay(t *testing.T) {
	r := storage.ExpireOn("x", "", time.Date(2027, 1, 1, 23, 30, 0, 0, time.FixedZone("", -3600)))
	assert.Equal(t, time.Date(2027, 1, 2, 0, 0, 0, 0, time.UTC), *r.Expiration.Date)
}

func TestMarshalConfiguration_WritesTheSchemaOrder(t *testing.T) {
	body, err := storage.MarshalConfiguration(storage.Configuration(storage.ExpireAfterDays("logs", "logs/", 30)))
	require.NoError(t, err)
	assert.Equal(t, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Rule><ID>logs</ID>`+
		`<Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>30</Days></Expiration>`+
		`</Rule></LifecycleConfiguration>`, string(body))
}
