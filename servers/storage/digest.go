package storage

import (
	"crypto/md5"  //nolint:gosec // Content-MD5 is the protocol's integrity check, not a security measure
	"crypto/sha1" //nolint:gosec // x-amz-checksum-sha1 likewise
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"net/http"
	"strings"

	"github.com/apistack/apistack/gen/storageapi"
)

// The body digests object storage verifies: Content-MD5 (RFC 1864) and the
// flexible checksums the S3 SDKs send, each the base64 of the digest in
// big-endian bytes. x-amz-sdk-checksum-algorithm names the one the SDK chose.
const (
	headerContentMD5        = "Content-MD5"
	headerChecksumAlgorithm = "X-Amz-Sdk-Checksum-Algorithm"
)

// crc64NVME is the CRC-64/NVME table (reflected polynomial), the SDKs' CRC64NVME.
var crc64NVME = crc64.MakeTable(0x9a6c9329ac4bc9b5)

// checksums maps each algorithm name of x-amz-sdk-checksum-algorithm to its
// header and hash.
var checksums = []struct {
	algorithm string
	header    string
	hash      func() hash.Hash
}{
	{"CRC32", "X-Amz-Checksum-Crc32", func() hash.Hash { return crc32.NewIEEE() }},
	{"CRC32C", "X-Amz-Checksum-Crc32c", func() hash.Hash { return crc32.New(crc32.MakeTable(crc32.Castagnoli)) }},
	{"CRC64NVME", "X-Amz-Checksum-Crc64nvme", func() hash.Hash { return crc64.New(crc64NVME) }},
	{"SHA1", "X-Amz-Checksum-Sha1", sha1.New},
	{"SHA256", "X-Amz-Checksum-Sha256", sha256.New},
}

// checkDigests holds body to every digest the request declares, as object
// storage does: Content-MD5 and each x-amz-checksum-* header present. A value
// that is not one base64 digest of the algorithm's size is InvalidDigest; a
// digest that is not the body's is BadDigest; an algorithm named in
// x-amz-sdk-checksum-algorithm without its header is InvalidRequest. All 400.
func checkDigests(h http.Header, body []byte) error {
	if err := checkDigest(h, headerContentMD5, md5.New(), body); err != nil {
		return err
	}
	for _, c := range checksums {
		if err := checkDigest(h, c.header, c.hash(), body); err != nil {
			return err
		}
	}
	if algs := h.Values(headerChecksumAlgorithm); len(algs) > 0 {
		alg := strings.ToUpper(strings.TrimSpace(algs[0]))
		for _, c := range checksums {
			if c.algorithm == alg {
				if len(algs) > 1 || len(h.Values(c.header)) == 0 {
					return newError(http.StatusBadRequest, storageapi.ErrorCodeInvalidRequest, "",
						"x-amz-sdk-checksum-algorithm names %s, but the request has no single %s header", alg, strings.ToLower(c.header))
				}
				return nil
			}
		}
		return newError(http.StatusBadRequest, storageapi.ErrorCodeInvalidRequest, "",
			"x-amz-sdk-checksum-algorithm %q is not one of CRC32, CRC32C, CRC64NVME, SHA1 and SHA256", algs[0])
	}
	return nil
}

func checkDigest(h http.Header, name string, sum hash.Hash, body []byte) error {
	values := h.Values(name)
	if len(values) == 0 {
		return nil
	}
	lower := strings.ToLower(name)
	if len(values) > 1 {
		return newError(http.StatusBadRequest, storageapi.ErrorCodeInvalidDigest, "", "the request has %d %s headers", len(values), lower)
	}
	declared, err := base64.StdEncoding.Strict().DecodeString(strings.TrimSpace(values[0]))
	if err != nil || len(declared) != sum.Size() {
		return newError(http.StatusBadRequest, storageapi.ErrorCodeInvalidDigest, "",
			"the %s you specified is not valid: it must be the base64 of a %d-byte digest", lower, sum.Size())
	}
	sum.Write(body)
	if subtle.ConstantTimeCompare(sum.Sum(nil), declared) != 1 {
		return newError(http.StatusBadRequest, storageapi.ErrorCodeBadDigest, "",
			"the %s you specified did not match what we received", lower)
	}
	return nil
}
