package restaurant

// Configuration entities are stored as the JSON the import checked against
// the spec (store.go), so an answer writes the stored documents as they are:
// decoding each into its Go type only to encode it again cost two thirds of
// a list's CPU. rawList and rawDoc are the answers of every list and get
// operation; the strict server interface takes them because they implement
// each operation's response interface.

import (
	"net/http"
	"strconv"
	"sync"
)

// rawList is a page of a list: a JSON array of stored documents, and the
// token of the next page (nil on the last).
type rawList struct {
	rows []entityRow
	next *string
}

func (l rawList) write(w http.ResponseWriter) error {
	size := 3 // [ ] and the newline JSON encoders end with
	for _, r := range l.rows {
		size += len(r.Doc) + 1
	}
	buf := listBodies.Get().(*[]byte)
	if cap(*buf) < size {
		*buf = make([]byte, 0, size)
	}
	defer func() {
		if cap(*buf) <= maxPooledListBody {
			listBodies.Put(buf)
		}
	}()
	body := append((*buf)[:0], '[')
	for i, r := range l.rows {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, r.Doc...)
	}
	body = append(body, ']', '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if l.next != nil {
		h.Set("Platform-Next-Page-Token", *l.next)
	}
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(body)
	*buf = body
	return err
}

// listBodies keeps the buffers list answers are assembled in: a page of
// menu items is tens of kilobytes, which every list otherwise allocated and
// cleared. A writer does not keep what it is given (io.Writer's contract),
// so a buffer is free again once the answer is written.
var listBodies = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledListBody is the largest buffer kept for the next answer.
const maxPooledListBody = 1 << 20

// rawDoc is one stored document.
type rawDoc []byte

func (d rawDoc) write(w http.ResponseWriter) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(d)+1))
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(d); err != nil {
		return err
	}
	_, err := w.Write([]byte{'\n'})
	return err
}
