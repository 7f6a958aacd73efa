package sandbox

import (
	"encoding/binary"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/validation"
)

func TestJournalCodec_RoundTrips(t *testing.T) {
	at := time.Date(2026, 11, 26, 2, 30, 0, 123000, time.UTC)
	entries := []apiserver.JournalEntry{
		{API: "pam", Operation: "ListGroups", Method: "GET", Path: "/v1/teams/sbx-1/groups", Query: "count=20", Status: 200,
			Time: at, SetTime: at.Add(3 * time.Hour), Duration: 1500 * time.Microsecond,
			RequestHeaders:  http.Header{"Authorization": {"[redacted]"}, "Accept": {"application/json", "text/plain"}},
			ResponseHeaders: http.Header{"Content-Type": {"application/json"}},
			RequestBody:     []byte{}, ResponseBody: []byte(`{"groups":[]}`), ResponseTruncated: true},
		{API: "fax", Operation: "SendFax", Method: "POST", Path: "/v2/faxes", Status: 422, Time: at.Add(time.Second), SetTime: at.Add(time.Second),
			RequestHeaders: http.Header{}, ResponseHeaders: http.Header{}, RequestBody: []byte{0xff, 0x00, 'x'}, ResponseBody: []byte{},
			RequestTruncated: true,
			Violations:       []validation.Cause{{In: "body", Name: "/to", Message: "value must be a string"}, {In: "body", Message: "property \"media_url\" is missing"}}},
	}
	got, err := decodeEntries(new(entryEncoder).encode(entries))
	require.NoError(t, err)
	assert.Equal(t, entries, got)

	empty, err := decodeEntries(new(entryEncoder).encode(nil))
	require.NoError(t, err)
	assert.Empty(t, empty)
}

func TestJournalCodec_RefusesCorruptRows(t *testing.T) {
	good := new(entryEncoder).encode([]apiserver.JournalEntry{{API: "pam", RequestHeaders: http.Header{}, ResponseHeaders: http.Header{},
		RequestBody: []byte{}, ResponseBody: []byte{}, Time: time.UnixMicro(0).UTC(), SetTime: time.UnixMicro(0).UTC()}})
	for name, data := range map[string][]byte{
		"empty":            nil,
		"unknown version":  append([]byte{9}, good[1:]...),
		"version 0":        append([]byte{0}, good[1:]...),
		"not zstd":         {codecVersion, 1, 2, 3},
		"truncated":        append([]byte{codecVersion}, zEncoder.EncodeAll([]byte{1, 3, 'p'}, nil)...),
		"too many entries": append([]byte{codecVersion}, zEncoder.EncodeAll([]byte{0xff, 0xff, 0x03}, nil)...),
		"left over":        append([]byte{codecVersion}, zEncoder.EncodeAll([]byte{0, 7}, nil)...),
	} {
		_, err := decodeEntries(data)
		assert.ErrorIs(t, err, errCorrupt, name)
	}
}

func TestJournalCodec_ReadsVersion1RowsWithTheStacksTimeAsTheSandboxs(t *testing.T) {
	at := time.Date(2026, 11, 26, 2, 30, 0, 0, time.UTC)
	// A version 1 row: one entry of empty strings, headers and bodies.
	var raw []byte
	raw = binary.AppendUvarint(raw, 1)
	for range 5 {
		raw = appendString(raw, "")
	}
	raw = binary.AppendVarint(raw, 200)
	raw = binary.AppendVarint(raw, at.UnixMicro())
	raw = binary.AppendVarint(raw, 7)
	raw = binary.AppendUvarint(raw, 0)
	raw = binary.AppendUvarint(raw, 0)
	raw = appendString(raw, "")
	raw = appendString(raw, "")
	raw = append(raw, 0)
	raw = binary.AppendUvarint(raw, 0)
	got, err := decodeEntries(zEncoder.EncodeAll(raw, []byte{1}))
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, 200, got[0].Status)
	assert.Equal(t, at, got[0].Time)
	assert.Equal(t, at, got[0].SetTime)
}

// The journal gets entries as they were sent: the encoding redacts their
// secret headers and body fields, and the encoder's buffers serve the
// next row without changing the last one's entries.
func TestJournalCodec_RedactsWhatItEncodes(t *testing.T) {
	at := time.Date(2026, 11, 26, 2, 30, 0, 0, time.UTC)
	entry := apiserver.JournalEntry{API: "pam", Operation: "CreateToken", Method: "POST", Path: "/v1/token", Status: 200, Time: at, SetTime: at,
		RequestHeaders:  http.Header{"Authorization": {"Bearer abc"}, "X-Session-Token": {"t1"}, "Accept": {"application/json"}},
		ResponseHeaders: http.Header{"Set-Cookie": {"s=1"}, "Content-Type": {"application/json"}},
		RequestBody:     []byte(`{"key_id":"k1","key_secret":"s3cret"}`), ResponseBody: []byte(`{"access_token":"tok","token_type":"bearer"}`)}
	var enc entryEncoder
	got, err := decodeEntries(enc.encode([]apiserver.JournalEntry{entry}))
	require.NoError(t, err)
	require.Len(t, got, 1)
	e := got[0]
	assert.Equal(t, http.Header{"Authorization": {apiserver.Redacted}, "X-Session-Token": {apiserver.Redacted}, "Accept": {"application/json"}}, e.RequestHeaders)
	assert.Equal(t, http.Header{"Set-Cookie": {apiserver.Redacted}, "Content-Type": {"application/json"}}, e.ResponseHeaders)
	assert.JSONEq(t, `{"key_id":"k1","key_secret":"[redacted]"}`, string(e.RequestBody))
	assert.JSONEq(t, `{"access_token":"[redacted]","token_type":"bearer"}`, string(e.ResponseBody))
	assert.Equal(t, "Bearer abc", entry.RequestHeaders.Get("Authorization"), "the request's own headers are left as they were")

	again, err := decodeEntries(enc.encode([]apiserver.JournalEntry{entry, entry}))
	require.NoError(t, err)
	assert.Equal(t, []apiserver.JournalEntry{e, e}, again)
}
