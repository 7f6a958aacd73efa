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
		require.NoError(t, faxListAnswer(l).VisitListFaxesResponse(answer))
		assert.Equal(t, generated.Code, answer.Code)
		assert.Equal(t, generated.Header().Get("Content-Type"), answer.Header().Get("Content-Type"))
		assert.Equal(t, generated.Body.String(), answer.Body.String())
	}
}
