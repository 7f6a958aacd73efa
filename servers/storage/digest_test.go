package storage_test

import (
	"crypto/md5"  //nolint:gosec // the protocol's Content-MD5
	"crypto/sha1" //nolint:gosec // the protocol's x-amz-checksum-sha1
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"hash/crc64"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/storageapi"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/storage/storagetest"
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

func be64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func TestCRC64NVME_IsTheStandardCheck(t *testing.T) {
	// The check value of CRC-64/NVME over "123456789".
	assert.Equal(t, uint64(0xae8b14860a799888), crc64.Checksum([]byte("123456789"), crc64.MakeTable(0x9a6c9329ac4bc9b5)))
}

func TestDigests_AreCheckedAsObjectStorageChecksThem(t *testing.T) {
	fake := clock.NewFake(start)
	env := storagetest.Start(t, storagetest.Options{Clock: fake})
	body := corpusFile(t, "valid", "expire-days-filter-prefix")
	other := []byte("another body")
	md5sum := md5.Sum(body)   //nolint:gosec // the protocol's Content-MD5
	sha1sum := sha1.Sum(body) //nolint:gosec // the protocol's checksum
	sha256sum := sha256.Sum256(body)
	wrongMD5 := md5.Sum(other) //nolint:gosec // the protocol's Content-MD5
	otherSHA256 := sha256.Sum256(other)
	right := map[string]string{
		"Content-MD5":              b64(md5sum[:]),
		"x-amz-checksum-crc32":     b64(be32(crc32.ChecksumIEEE(body))),
		"x-amz-checksum-crc32c":    b64(be32(crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))),
		"x-amz-checksum-crc64nvme": b64(be64(crc64.Checksum(body, crc64.MakeTable(0x9a6c9329ac4bc9b5)))),
		"x-amz-checksum-sha1":      b64(sha1sum[:]),
		"x-amz-checksum-sha256":    b64(sha256sum[:]),
	}

	for name, value := range right {
		t.Run("right "+name, func(t *testing.T) {
			status, e, _ := rawRequest{body: body, at: start, headers: map[string][]string{name: {value}}}.send(t, env)
			assert.Equal(t, http.StatusOK, status, "%s", e.Message)
		})
	}
	t.Run("every digest and the algorithm", func(t *testing.T) {
		h := map[string][]string{"x-amz-sdk-checksum-algorithm": {"CRC32"}}
		for k, v := range right {
			h[k] = []string{v}
		}
		status, e, _ := rawRequest{body: body, at: start, headers: h}.send(t, env)
		assert.Equal(t, http.StatusOK, status, "%s", e.Message)
	})

	n, err := env.Operator.LifecycleCount(t.Context())
	require.NoError(t, err)
	require.Equal(t, 1, n)
	status, e, _ := rawRequest{method: http.MethodDelete, at: start}.send(t, env)
	require.Equal(t, http.StatusNoContent, status, "%s", e.Message)
	requireNothingStored(t, env)

	for _, tc := range []struct {
		name    string
		headers map[string][]string
		code    storageapi.ErrorCode
	}{
		{"Content-MD5 of another body", map[string][]string{"Content-MD5": {b64(wrongMD5[:])}}, storageapi.ErrorCodeBadDigest},
		{"Content-MD5 not base64", map[string][]string{"Content-MD5": {"not base64!"}}, storageapi.ErrorCodeInvalidDigest},
		{"Content-MD5 of 15 bytes", map[string][]string{"Content-MD5": {b64(md5sum[:15])}}, storageapi.ErrorCodeInvalidDigest},
		{"Content-MD5 twice", map[string][]string{"Content-MD5": {right["Content-MD5"], right["Content-MD5"]}}, storageapi.ErrorCodeInvalidDigest},
		{"crc32 of another body", map[string][]string{"x-amz-checksum-crc32": {b64(be32(crc32.ChecksumIEEE(other)))}}, storageapi.ErrorCodeBadDigest},
		{"crc32 of 8 bytes", map[string][]string{"x-amz-checksum-crc32": {b64(be64(1))}}, storageapi.ErrorCodeInvalidDigest},
		{"sha256 of 16 bytes", map[string][]string{"x-amz-checksum-sha256": {b64(wrongMD5[:])}}, storageapi.ErrorCodeInvalidDigest},
		{"sha256 of another body", map[string][]string{"x-amz-checksum-sha256": {b64(otherSHA256[:])}}, storageapi.ErrorCodeBadDigest},
		{"right MD5, wrong crc32c", map[string][]string{"Content-MD5": {right["Content-MD5"]}, "x-amz-checksum-crc32c": {right["x-amz-checksum-crc32"]}}, storageapi.ErrorCodeBadDigest},
		{"algorithm without its checksum", map[string][]string{"x-amz-sdk-checksum-algorithm": {"SHA256"}, "x-amz-checksum-crc32": {right["x-amz-checksum-crc32"]}}, storageapi.ErrorCodeInvalidRequest},
		{"unknown algorithm", map[string][]string{"x-amz-sdk-checksum-algorithm": {"MD4"}}, storageapi.ErrorCodeInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, e, _ := rawRequest{body: body, at: start, headers: tc.headers}.send(t, env)
			assert.Equal(t, http.StatusBadRequest, status)
			assert.Equal(t, tc.code, e.Code, "%s", e.Message)
			requireNothingStored(t, env)
		})
	}
}
