package fax

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/gen/faxserver"
)

// TestAppendFaxListWritesWhatEncodingJSONWrites: on random pages of faxes
// (every optional field present or not; strings plain, with JSON and HTML
// characters, control characters, non-ASCII and invalid UTF-8; times in and
// out of UTC, with and without fractions, at the edges of RFC 3339's years;
// no page, an empty one), the hand-written encoding is byte for byte what
// encoding/json's Encoder writes, and the answer is the generated answer's
// status, type and body.
func TestAppendFaxListWritesWhatEncodingJSONWrites(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	strs := []string{"", "+13125550100", "https://example.com/media?sig=a&exp=1", `quote " and \ backslash`,
		"<script>", "tab\there", "new\nline", "caf\u00e9", "\u2028", "bad\xffutf8", "outbound", "delivered"}
	str := func() string { return strs[rng.IntN(len(strs))] }
	times := []time.Time{
		time.Date(2026, 11, 28, 2, 3, 4, 0, time.UTC),
		time.Date(2026, 11, 28, 2, 3, 4, 123456000, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600)),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		{},
	}
	tm := func() time.Time { return times[rng.IntN(len(times))] }
	maybe := func() bool { return rng.IntN(2) == 0 }
	for i := range 2000 {
		var l faxapi.FaxList
		if i%50 != 0 {
			l.Data = []faxapi.Fax{}
		}
		for range rng.IntN(4) {
			f := faxapi.Fax{ConnectionId: str(), CreatedAt: tm(), Direction: faxapi.FaxDirection(str()), From: str(),
				Id: uuid.New(), Quality: faxapi.FaxQuality(str()), RecordType: faxapi.FaxRecordType(str()),
				Status: faxapi.FaxStatus(str()), StoreMedia: maybe(), To: str(), UpdatedAt: tm(),
				WebhookFailoverUrl: str(), WebhookUrl: str()}
			if maybe() {
				n := rng.IntN(1000) - 10
				f.CallDurationSecs = &n
			}
			if maybe() {
				r := faxapi.FaxFailureReason(str())
				f.FailureReason = &r
			}
			if maybe() {
				s := str()
				f.MediaUrl = &s
			}
			if maybe() {
				n := rng.IntN(100)
				f.PageCount = &n
			}
			if maybe() {
				p := maybe()
				f.PartialContent = &p
			}
			if maybe() {
				s := str()
				f.StoredMediaUrl = &s
			}
			l.Data = append(l.Data, f)
		}
		l.Meta = faxapi.PageMeta{PageNumber: rng.IntN(100), PageSize: rng.IntN(250), TotalPages: rng.IntN(9), TotalResults: rng.IntN(9999)}

		var want bytes.Buffer
		wantErr := json.NewEncoder(&want).Encode(l)
		got, gotErr := appendFaxList(nil, l)
		if wantErr != nil {
			require.Error(t, gotErr)
			continue
		}
		require.NoError(t, gotErr)
		require.Equal(t, want.String(), string(got))

		generated, answer := httptest.NewRecorder(), httptest.NewRecorder()
		require.NoError(t, faxserver.ListFaxes200JSONResponse(l).VisitListFaxesResponse(generated))
		require.NoError(t, faxListBody(got).VisitListFaxesResponse(answer))
		assert.Equal(t, generated.Code, answer.Code)
		assert.Equal(t, generated.Header().Get("Content-Type"), answer.Header().Get("Content-Type"))
		assert.Equal(t, generated.Body.String(), answer.Body.String())
	}
}

// BenchmarkAppendFaxList encodes a page of 20 faxes as a list answers
// them: every field set, URLs with query strings, times with fractions.
func BenchmarkAppendFaxList(b *testing.B) {
	at := time.Date(2026, 11, 28, 2, 3, 4, 123456000, time.UTC)
	l := faxapi.FaxList{Data: []faxapi.Fax{}, Meta: faxapi.PageMeta{PageNumber: 1, PageSize: 20, TotalPages: 5, TotalResults: 100}}
	for range 20 {
		n, media := 3, "https://docs.example.com/media/contract.pdf?sig=a1b2c3&exp=1795859597"
		reason, partial := faxapi.FaxFailureReason("user_busy"), false
		l.Data = append(l.Data, faxapi.Fax{ConnectionId: "1a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d", CreatedAt: at,
			Direction: faxapi.FaxDirectionOutbound, From: "+13125550100", Id: uuid.New(), Quality: faxapi.FaxQualityNormal,
			RecordType: faxapi.FaxRecordTypeFax, Status: faxapi.FaxStatusFailed, To: "+14155550123", UpdatedAt: at.Add(time.Minute),
			WebhookUrl: "https://hooks.example.com/fax/events", WebhookFailoverUrl: "https://hooks-backup.example.com/fax/events",
			CallDurationSecs: &n, PageCount: &n, FailureReason: &reason, PartialContent: &partial, MediaUrl: &media})
	}
	var buf []byte
	for b.Loop() {
		var err error
		buf, err = appendFaxList(buf[:0], l)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}

// TestAppendRFC3339NanoZWritesWhatAppendFormatWrites: at random instants of
// years 0-9999, whole seconds and every length of fraction, in UTC and in
// another zone of offset 0.
func TestAppendRFC3339NanoZWritesWhatAppendFormatWrites(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	first := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	last := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()
	zones := []*time.Location{time.UTC, time.FixedZone("GMT", 0)}
	for i := range 20000 {
		ns := rng.IntN(1_000_000_000)
		for range i % 10 { // 0 to 9 trailing zeros
			ns -= ns % 10
			ns /= 10
		}
		for range i % 10 {
			ns *= 10
		}
		at := time.Unix(first+rng.Int64N(last-first+1), int64(ns)).In(zones[i%2])
		require.Equal(t, at.Format(time.RFC3339Nano), string(appendRFC3339NanoZ(nil, at)), "%v", at)
	}
}
