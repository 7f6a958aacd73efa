// Package s3compat makes the AWS SDK for Go v2's S3 client
// (github.com/aws/aws-sdk-go-v2/service/s3) talk to the apistack storage API.
//
// The storage API speaks the object-storage protocol, signed with Signature
// Version 4 under other names: CLOUD4-HMAC-SHA256, X-Cloud-Date,
// X-Cloud-Content-Sha256 and the scope terminator cloud4_request. The SDK's
// signer hard-codes the AWS names, so Signer replaces it: it implements the
// SDK's HTTPSignerV4 with protocol/sigv4, the same functions the storage
// server verifies with. Everything else is the SDK's own: its XML, its errors
// (an error answer is a smithy.APIError with the object-storage code), its
// retries and the checksums it adds (x-amz-checksum-crc32 and friends, or
// Content-MD5), which the server verifies.
//
// The SDK's other headers are handled so:
//
//   - the signing protocol's own headers are the signer's business: the SDK
//     sets X-Amz-Content-Sha256 before signing (and its signer would set
//     X-Amz-Date), so Signer removes the AWS-named ones and writes X-Cloud-Date
//     and X-Cloud-Content-Sha256 instead; exactly one name of each reaches the
//     server, and no header claims a signature scheme the request does not use;
//   - the protocol's headers (x-amz-checksum-*, x-amz-sdk-checksum-algorithm,
//     Content-MD5, x-amz-expected-bucket-owner, amz-sdk-*) are left as they are
//     and signed like every other header: they are the object-storage
//     protocol, not the signature scheme, and the server verifies the digests
//     and ignores what it does not implement.
//
// Any other S3 SDK works the same way: give it a signer with these names and
// path-style addressing against the server's endpoint.
package s3compat

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/apistack/apistack/protocol/sigv4"
)

// Signer signs the SDK's requests with a SigV4-style scheme, CLOUD4-HMAC-SHA256
// by default. It implements s3.HTTPSignerV4 (and aws/signer/v4.HTTPSigner); set
// it as s3.Options.HTTPSignerV4, or use NewClient.
type Signer struct {
	// Scheme gives the names; the zero value means sigv4.Cloud4.
	Scheme sigv4.Scheme
}

var _ s3.HTTPSignerV4 = Signer{}

// awsSigningHeaders are the AWS-named headers of the signing protocol, which
// the scheme's own names replace.
var awsSigningHeaders = []string{sigv4.AWS4.DateHeader(), sigv4.AWS4.ContentSHA256Header(), sigv4.AWS4.SecurityTokenHeader()}

// SignHTTP signs r for service and region at signingTime, with payloadHash,
// the hex SHA-256 of the body that the SDK computed, as the content hash: it
// sets the scheme's date and content-hash headers and Authorization, signing
// every header of r but the ones proxies change (User-Agent, ...). The SDK's
// signer options (path escaping, logging) do not apply: the storage API signs
// the path URI-encoded once, as object storage does. Session tokens and
// unsigned or streaming payloads are not part of the storage API's scheme and
// are refused.
func (s Signer) SignHTTP(_ context.Context, credentials aws.Credentials, r *http.Request, payloadHash, service, region string, signingTime time.Time, _ ...func(*v4.SignerOptions)) error {
	if credentials.SessionToken != "" {
		return errors.New("s3compat: the storage API has no session tokens; sign with an access key from its admin API")
	}
	if len(payloadHash) != 64 || strings.Trim(payloadHash, "0123456789abcdef") != "" {
		return fmt.Errorf("s3compat: the payload hash %q is not a hex SHA-256; the storage API signs every body's hash (no UNSIGNED-PAYLOAD, no streaming signatures)", payloadHash)
	}
	scheme := s.Scheme
	if scheme == (sigv4.Scheme{}) {
		scheme = sigv4.Cloud4
	}
	for _, name := range awsSigningHeaders {
		r.Header.Del(name)
	}
	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	signed := scheme.SignHeaders(sigv4.Request{
		Method:      r.Method,
		Host:        host,
		Path:        r.URL.Path,
		Query:       r.URL.Query(),
		Header:      r.Header,
		PayloadHash: payloadHash,
	}, sigv4.Credentials{AccessKeyID: credentials.AccessKeyID, SecretAccessKey: credentials.SecretAccessKey},
		region, service, signingTime, sigv4.Options{SignPayloadHash: true})
	for k, v := range signed.Header {
		r.Header[k] = v
	}
	return nil
}

// Config is what an S3 client needs to reach the storage API.
type Config struct {
	// Endpoint is the storage API's base URL, such as "http://127.0.0.1:8083".
	Endpoint string
	// Region is the region the server signs for (its --storage-region).
	Region string
	// KeyID and Secret are an access key from the admin API.
	KeyID, Secret string
}

// Options returns the s3.Options settings that point an S3 client at the
// storage API: its endpoint, path-style addressing (bucket in the path, so no
// DNS name is needed), the region, static credentials and Signer.
func Options(cfg Config) func(*s3.Options) {
	return func(o *s3.Options) {
		o.BaseEndpoint = aws.String(cfg.Endpoint)
		o.UsePathStyle = true
		o.Region = cfg.Region
		o.Credentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: cfg.KeyID, SecretAccessKey: cfg.Secret, Source: "s3compat"}, nil
		})
		o.HTTPSignerV4 = Signer{}
	}
}

// NewClient returns an S3 client for the storage API; optFns tune it further
// (an HTTP client, a retryer, ...), applied after Options(cfg).
func NewClient(cfg Config, optFns ...func(*s3.Options)) *s3.Client {
	return s3.New(s3.Options{}, append([]func(*s3.Options){Options(cfg)}, optFns...)...)
}
