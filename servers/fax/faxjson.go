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
	"sync"
	"time"

	"github.com/apistack/apistack/gen/faxapi"
)

// faxListAnswer is ListFaxes's 200, encoded by appendFaxList.
type faxListAnswer faxapi.FaxList

// VisitListFaxesResponse writes the answer, with its length.
func (a faxListAnswer) VisitListFaxesResponse(w http.ResponseWriter) error {
	buf := faxListBodies.Get().(*[]byte)
	defer func() {
		if cap(*buf) <= maxPooledFaxList {
			faxListBodies.Put(buf)
		}
	}()
	body, err := appendFaxList((*buf)[:0], faxapi.FaxList(a))
	if err != nil {
		return err
	}
	*buf = body
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(body)
	return err
}

// faxListBodies keeps the buffers fax pages are encoded in; a writer does
// not keep what it is given (io.Writer's contract), so a buffer is free
// again once the answer is written.
var faxListBodies = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledFaxList is the largest buffer kept for the next answer.
const maxPooledFaxList = 1 << 20

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
		b = t.AppendFormat(b, `"`+time.RFC3339Nano+`"`)
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

// appendJSONString appends s quoted as encoding/json quotes it (HTML
// characters escaped); ok is false, and b unchanged, for a string with a
// character other than printable ASCII.
func appendJSONString(b []byte, s string) (_ []byte, ok bool) {
	start := len(b)
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '<':
			b = append(b, `\u003c`...)
		case c == '>':
			b = append(b, `\u003e`...)
		case c == '&':
			b = append(b, `\u0026`...)
		case c < 0x20 || c > 0x7e:
			return b[:start], false
		default:
			b = append(b, c)
		}
	}
	return append(b, '"'), true
}
