package fax

// A page of faxes is encoded by hand: encoding/json's reflection over the
// generated types was nearly half of a fax list's CPU. appendFaxList writes
// exactly the bytes encoding/json's Encoder writes for the same value (a
// test holds it to that on random faxes), and hands any value it is not
// sure of (a string with characters other than printable ASCII, a time not
// in UTC or outside the years RFC 3339 writes) to encoding/json itself.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/apistack/apistack/gen/faxapi"
)

// faxListBody is ListFaxes's 200: a page encoded by appendFaxList.
type faxListBody []byte

// VisitListFaxesResponse writes the answer, with its length.
func (b faxListBody) VisitListFaxesResponse(w http.ResponseWriter) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(b)
	return err
}

// renderedTTL bounds how long an encoded page is kept: its key names one
// second of the caller's clock, so past that second only a frozen sandbox
// clock reads it again.
const renderedTTL = 2 * time.Second

// renderedFaxListKey names an encoded page by everything its bytes depend
// on: the account, the filters, the page, the second the media links are
// signed at and the base URL they point to.
func renderedFaxListKey(account string, f faxFilter, number, size int, now time.Time, baseURL string) string {
	b := make([]byte, 0, 128)
	b = append(b, account...)
	for _, t := range []*time.Time{f.CreatedGTE, f.CreatedLTE} {
		b = append(b, '|')
		if t != nil {
			b = strconv.AppendInt(b, t.UnixMicro(), 10)
		}
	}
	for _, v := range []string{f.Direction, f.From, f.To} {
		b = strconv.AppendQuote(append(b, '|'), v)
	}
	b = strconv.AppendInt(append(b, '|'), int64(number), 10)
	b = strconv.AppendInt(append(b, '|'), int64(size), 10)
	b = strconv.AppendInt(append(b, '|'), now.Unix(), 10)
	return string(append(append(b, '|'), baseURL...))
}

// appendFaxList appends l as encoding/json's Encoder writes it, newline
// included.
func appendFaxList(b []byte, l faxapi.FaxList) ([]byte, error) {
	start := len(b)
	b = append(b, `{"data":`...)
	if l.Data == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range l.Data {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendFax(b, &l.Data[i]); !ok {
				return encodeWithJSON(b[:start], l)
			}
		}
		b = append(b, ']')
	}
	m := l.Meta
	b = append(b, `,"meta":{"page_number":`...)
	b = strconv.AppendInt(b, int64(m.PageNumber), 10)
	b = append(b, `,"page_size":`...)
	b = strconv.AppendInt(b, int64(m.PageSize), 10)
	b = append(b, `,"total_pages":`...)
	b = strconv.AppendInt(b, int64(m.TotalPages), 10)
	b = append(b, `,"total_results":`...)
	b = strconv.AppendInt(b, int64(m.TotalResults), 10)
	return append(b, "}}\n"...), nil
}

// encodeWithJSON appends l as encoding/json encodes it.
func encodeWithJSON(b []byte, l faxapi.FaxList) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	if err := json.NewEncoder(buf).Encode(l); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// appendFax appends f's fields in the order, and with the omissions, of its
// struct tags; ok is false when a value is one to leave to encoding/json.
func appendFax(b []byte, f *faxapi.Fax) (_ []byte, ok bool) {
	ok = true
	str := func(key, v string) {
		b = append(b, key...)
		var fine bool
		if b, fine = appendJSONString(b, v); !fine {
			ok = false
		}
	}
	at := func(key string, t time.Time) {
		if _, offset := t.Zone(); offset != 0 || t.Year() < 0 || t.Year() > 9999 {
			ok = false
			return
		}
		b = append(b, key...)
		b = append(appendRFC3339NanoZ(append(b, '"'), t), '"')
	}
	b = append(b, '{')
	sep := ""
	if f.CallDurationSecs != nil {
		b = append(b, `"call_duration_secs":`...)
		b = strconv.AppendInt(b, int64(*f.CallDurationSecs), 10)
		sep = ","
	}
	str(sep+`"connection_id":`, f.ConnectionId)
	at(`,"created_at":`, f.CreatedAt)
	str(`,"direction":`, string(f.Direction))
	if f.FailureReason != nil {
		str(`,"failure_reason":`, string(*f.FailureReason))
	}
	str(`,"from":`, f.From)
	b = append(b, `,"id":"`...)
	b = append(b, f.Id.String()...)
	b = append(b, '"')
	if f.MediaUrl != nil {
		str(`,"media_url":`, *f.MediaUrl)
	}
	if f.PageCount != nil {
		b = append(b, `,"page_count":`...)
		b = strconv.AppendInt(b, int64(*f.PageCount), 10)
	}
	if f.PartialContent != nil {
		b = append(b, `,"partial_content":`...)
		b = strconv.AppendBool(b, *f.PartialContent)
	}
	str(`,"quality":`, string(f.Quality))
	str(`,"record_type":`, string(f.RecordType))
	str(`,"status":`, string(f.Status))
	b = append(b, `,"store_media":`...)
	b = strconv.AppendBool(b, f.StoreMedia)
	if f.StoredMediaUrl != nil {
		str(`,"stored_media_url":`, *f.StoredMediaUrl)
	}
	str(`,"to":`, f.To)
	at(`,"updated_at":`, f.UpdatedAt)
	str(`,"webhook_failover_url":`, f.WebhookFailoverUrl)
	str(`,"webhook_url":`, f.WebhookUrl)
	return append(b, '}'), ok
}

// appendRFC3339NanoZ appends t, whose offset is 0 and year within 0-9999,
// as t.AppendFormat(b, time.RFC3339Nano) does, in a fifth of its time:
// the fraction's trailing zeros dropped, Z for the offset.
func appendRFC3339NanoZ(b []byte, t time.Time) []byte {
	year, month, day := t.Date()
	hour, minute, second := t.Clock()
	b = append(b, byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+month/10), byte('0'+month%10), '-', byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':', byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+second/10), byte('0'+second%10))
	if ns := t.Nanosecond(); ns != 0 {
		var digits [9]byte
		for i := len(digits) - 1; i >= 0; i-- {
			digits[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := len(digits)
		for digits[n-1] == '0' {
			n--
		}
		b = append(append(b, '.'), digits[:n]...)
	}
	return append(b, 'Z')
}

// appendJSONString appends s quoted as encoding/json quotes it (HTML
// characters escaped); ok is false, and b unchanged, for a string with a
// character other than printable ASCII.
func appendJSONString(b []byte, s string) (_ []byte, ok bool) {
	start := len(b)
	b = append(b, '"')
	run := 0 // s[run:i] needs no escape: appended at once
	for i := 0; i < len(s); i++ {
		c := s[i]
		if plainJSON[c] {
			continue
		}
		b = append(b, s[run:i]...)
		run = i + 1
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '<':
			b = append(b, `\u003c`...)
		case '>':
			b = append(b, `\u003e`...)
		case '&':
			b = append(b, `\u0026`...)
		default: // a control character or not ASCII
			return b[:start], false
		}
	}
	b = append(b, s[run:]...)
	return append(b, '"'), true
}

// plainJSON holds the bytes appendJSONString writes as they are: printable
// ASCII but the quote, the backslash and the three HTML characters
// encoding/json escapes.
var plainJSON = func() (t [256]bool) {
	for c := 0x20; c <= 0x7e; c++ {
		t[c] = !strings.ContainsRune(`"\<>&`, rune(c))
	}
	return t
}()
