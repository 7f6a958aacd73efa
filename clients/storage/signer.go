package storage

import "github.com/apistack/apistack/protocol/sigv4"

// Signer is an http.RoundTripper that signs every request it carries with a
// SigV4-style scheme: CLOUD4-HMAC-SHA256 by default, or any other Scheme (such
// as sigv4.AWS4) with the same code. It sets the date and payload-hash headers
// and Authorization, signing every header of the request but the ones proxies
// change (User-Agent, ...), and never modifies the caller's request. Its
// fields are Scheme, Credentials, Region, Service, Now and Next.
//
// It is protocol/sigv4's Transport, the signer the storage server's tests
// sign with too.
type Signer = sigv4.Transport
