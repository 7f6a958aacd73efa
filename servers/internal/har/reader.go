package har

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNotHAR is the error of a document that is no HAR log.
var ErrNotHAR = errors.New("not a HAR document")

// ReadFile reads the HAR file path (Read).
func ReadFile(path string) (*Log, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("har: %w", err)
	}
	defer f.Close()
	log, err := Read(bufio.NewReaderSize(f, 64<<10))
	if err != nil {
		return nil, fmt.Errorf("har: %s: %w", path, err)
	}
	return log, nil
}

// Read decodes a HAR document entry by entry. A document that ends inside
// its entries array (its recorder was killed) is read up to its last whole
// entry, with Truncated set; any other malformed document is an error.
func Read(r io.Reader) (*Log, error) {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	var log *Log
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNotHAR, err)
		}
		if key != "log" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrNotHAR, err)
			}
			continue
		}
		if log, err = readLog(dec); err != nil || log.Truncated {
			return log, err
		}
	}
	if log == nil {
		return nil, fmt.Errorf("%w: no log object", ErrNotHAR)
	}
	return log, nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotHAR, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("%w: want %q, found %v", ErrNotHAR, want, tok)
	}
	return nil
}

// readLog reads the log object's members; its entries one at a time.
func readLog(dec *json.Decoder) (*Log, error) {
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	log := &Log{Entries: []Entry{}}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNotHAR, err)
		}
		var target any
		switch key {
		case "entries":
			if err := readEntries(dec, log); err != nil || log.Truncated {
				return log, err
			}
			continue
		case "version":
			target = &log.Version
		case "creator":
			target = &log.Creator
		case "browser":
			target = &log.Browser
		case "comment":
			target = &log.Comment
		case "_bodyCap":
			target = &log.BodyCap
		default:
			target = new(json.RawMessage)
		}
		if err := dec.Decode(target); err != nil {
			return nil, fmt.Errorf("%w: log.%v: %w", ErrNotHAR, key, err)
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, err
	}
	if log.Version != "" && log.Version != "1.1" && log.Version != Version {
		return nil, fmt.Errorf("%w: version %q", ErrNotHAR, log.Version)
	}
	return log, nil
}

// readEntries reads the entries array; a document ending inside it marks
// log Truncated.
func readEntries(dec *json.Decoder, log *Log) error {
	tok, err := dec.Token()
	if err != nil {
		if truncation(err) {
			log.Truncated = true
			return nil
		}
		return fmt.Errorf("%w: entries: %w", ErrNotHAR, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("%w: entries is not an array", ErrNotHAR)
	}
	for {
		more := dec.More()
		if !more {
			if _, err := dec.Token(); err != nil {
				if truncation(err) {
					log.Truncated = true
					return nil
				}
				return fmt.Errorf("%w: entries: %w", ErrNotHAR, err)
			}
			return nil
		}
		var e Entry
		if err := dec.Decode(&e); err != nil {
			if truncation(err) {
				log.Truncated = true
				return nil
			}
			return fmt.Errorf("%w: entry %d: %w", ErrNotHAR, len(log.Entries), err)
		}
		log.Entries = append(log.Entries, e)
	}
}

// truncation reports an error of a document that ended early.
func truncation(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
