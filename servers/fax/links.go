package fax

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strconv"
	"time"
)

// MediaLinkTTL is how long a signed media link stays valid.
const MediaLinkTTL = 10 * time.Minute

// mediaLink returns a link to document id, valid MediaLinkTTL from now. The
// link's signature is an HMAC over the id and the expiry, so changing either
// makes it fail.
func (s *Server) mediaLink(id string, now time.Time) string {
	expires := now.Add(MediaLinkTTL).Unix()
	q := url.Values{}
	q.Set("expires", strconv.FormatInt(expires, 10))
	q.Set("signature", s.linkSignature(id, expires))
	return *s.baseURL.Load() + "/v2/media/" + id + "?" + q.Encode()
}

func (s *Server) linkSignature(id string, expires int64) string {
	m := hmac.New(sha256.New, s.linkKey)
	m.Write([]byte(id))
	m.Write([]byte{'|'})
	m.Write([]byte(strconv.FormatInt(expires, 10)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkMediaLink refuses (403) a link that was altered or has expired. The
// signature is checked first, so an altered expiry never reads as "expired".
func (s *Server) checkMediaLink(ctx context.Context, id string, expires int64, signature string) error {
	// Strict: a lenient decoder ignores the unused bits of the last
	// character, so several strings would pass for one signature.
	got, err := base64.RawURLEncoding.Strict().DecodeString(signature)
	want, _ := base64.RawURLEncoding.Strict().DecodeString(s.linkSignature(id, expires))
	if err != nil || !hmac.Equal(got, want) {
		return errForbidden("the media link is not valid")
	}
	if !s.mediaClock(ctx, id).Now().Before(time.Unix(expires, 0)) {
		return errForbidden("the media link expired at %s; refresh the fax for a new one", time.Unix(expires, 0).UTC().Format(time.RFC3339))
	}
	return nil
}
