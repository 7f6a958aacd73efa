// Package lifecycledoc reads a lifecycle configuration request body strictly and
// safely into the generated types (gen/lifecycle) and checks it in two layers.
//
// Layer one is the schema, specs/storage/lifecycle.xsd, read through internal/xsd
// (Validate). A test keeps it in agreement with xmllint over the corpus in
// testdata/lifecycle. Hostile input fails here, fast and with MalformedXML:
//
//   - a body over MaxBodySize (1 MiB) is refused after reading at most
//     MaxBodySize+1 bytes (ReadBody), or before reading when its Content-Length
//     says so (the server's job); a real configuration of 1000 rules is about
//     300 KiB;
//   - more Rule elements than MaxRules or more elements than MaxElements,
//     refused at the first one too many, before the rest is read;
//   - an empty body, invalid UTF-8, any document type declaration (so no entity is
//     ever defined, let alone expanded), nesting deeper than MaxDepth, an unknown
//     element, a root element in a namespace not accepted (Namespaces), an element
//     in another namespace than its root's, an attribute, text where elements
//     belong, and anything after the root element.
//
// Namespaces: a document may be written in the protocol's namespace (Namespace,
// the schema's target, what every S3 SDK writes), in apistack's own
// (ApistackNamespace) or in none, as object storage accepts it; its root decides
// and every element must be in the root's namespace. It is read as if written
// in Namespace, and Marshal writes Namespace.
//
// Order of children: the schema makes every complex type whose children do not
// repeat an xs:all, so a Rule, Transition, NoncurrentVersionTransition,
// NoncurrentVersionExpiration, AbortIncompleteMultipartUpload and Tag take their
// children in any order (the AWS SDKs write a rule's Expiration before its ID;
// others write members alphabetically), each at most once: a duplicate child (a
// second Status, Expiration or ID) or a missing Status is MalformedXML here. A
// Filter and an Expiration hold one child (an xs:choice), so their order cannot
// vary. What XML Schema 1.0 cannot say with xs:all is decided so:
//
//   - Transition and NoncurrentVersionTransition occur at most once in a rule
//     (the protocol allows several): two of either are MalformedXML, which is as
//     good as NotImplemented for elements this service does not support;
//   - And stays a sequence in the protocol's order (Prefix, Tag*,
//     ObjectSizeGreaterThan, ObjectSizeLessThan), since its Tag repeats: an And
//     in another order is MalformedXML rather than NotImplemented;
//   - "a Prefix or a Filter, exactly one" and a Transition's "a Date or Days, not
//     both" move to layer two, still as MalformedXML.
//
// Marshal writes the schema's declared order whatever order was read.
//
// Only UTF-8 is read, with or without a byte order mark; a document declaring
// another encoding is MalformedXML (xmllint would transcode it).
//
// Codes of layer one: a value outside a length or numeric bound of the schema (an
// ID over 255 characters, Days of 0) is InvalidArgument, as object storage answers
// them; every other schema failure is MalformedXML.
//
// Layer two is what this service supports and the rules the schema cannot say
// (Check):
//
//   - MalformedXML first, for the structure the schema's xs:all groups leave out:
//     a rule with both a Prefix and a Filter or with neither, a Transition with
//     both a Date and Days;
//   - supported: ID, Status, Prefix, Filter with a Prefix (or empty), Expiration
//     with Days or Date, NoncurrentVersionExpiration (NoncurrentDays,
//     NewerNoncurrentVersions) and AbortIncompleteMultipartUpload;
//   - valid but unsupported, answered NotImplemented (501) naming the element:
//     Transition and NoncurrentVersionTransition (the service has one storage
//     class), Filter/Tag, Filter/And and Filter/ObjectSizeGreaterThan/LessThan (it
//     keeps no object tags or sizes) and Expiration/ExpiredObjectDeleteMarker (it
//     keeps no delete markers);
//   - InvalidArgument: duplicate rule IDs, IDs over 255 characters, days below 1,
//     a Date not at midnight UTC, a rule with no action, Expiration on a versioned
//     bucket and NoncurrentVersionExpiration on one without versioning.
package lifecycledoc

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"unicode/utf8"

	"github.com/apistack/apistack/gen/lifecycle"
	"github.com/apistack/apistack/internal/xsd"
)

// Namespace is the protocol's namespace, the schema's target: every S3 SDK
// writes it, and Marshal writes it.
const Namespace = lifecycle.Namespace

// ApistackNamespace is apistack's own namespace, accepted as well.
const ApistackNamespace = "http://cloud.apistack.dev/doc/2006-03-01/"

// Namespaces are the namespaces a document may be written in besides Namespace:
// ApistackNamespace and none ("").
var Namespaces = []string{ApistackNamespace, ""}

// MaxBodySize is the largest lifecycle configuration accepted, in bytes: 1 MiB.
const MaxBodySize = 1 << 20

// MaxDepth is the deepest element nesting read. The schema's deepest path,
// LifecycleConfiguration/Rule/Filter/And/Tag/Key, is 6 levels.
const MaxDepth = 16

// MaxElements is the most elements a document may hold: a configuration of
// MaxRules rules, each with every element the schema allows and several
// tags, fits well within it. Like the schema's maxOccurs (1,000 Rule
// elements), it is enforced while the body is read: the element past it is
// refused as it starts, so what a request costs in memory is bounded by
// these counts, not by what a 1 MiB body could hold.
const MaxElements = 32 << 10

// Error codes, as object storage names them.
const (
	CodeMalformedXML    = "MalformedXML"
	CodeInvalidArgument = "InvalidArgument"
	CodeNotImplemented  = "NotImplemented"
)

// Error is a rejected configuration.
type Error struct {
	// Code is the object-storage error code: MalformedXML, InvalidArgument or NotImplemented.
	Code string
	// Status is the HTTP status that goes with Code.
	Status int
	// Element is the local name of the element at fault, when there is one.
	Element string
	// Message says what is wrong, naming the element.
	Message string
	// Err is the underlying error, if any.
	Err error
}

// Error returns code and message.
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

func malformed(element string, err error, format string, args ...any) *Error {
	return &Error{Code: CodeMalformedXML, Status: http.StatusBadRequest, Element: element,
		Message: fmt.Sprintf(format, args...), Err: err}
}

var schema = sync.OnceValues(func() (*xsd.Schema, error) {
	return xsd.Parse([]byte(lifecycle.XSD))
})

// ReadBody reads r up to MaxBodySize bytes; a longer body is MalformedXML after
// reading at most one byte more.
func ReadBody(r io.Reader) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, MaxBodySize+1))
	if err != nil {
		return nil, fmt.Errorf("lifecycledoc: reading the body: %w", err)
	}
	if len(body) > MaxBodySize {
		return nil, TooLarge()
	}
	return body, nil
}

// TooLarge is the error of a body over MaxBodySize, for callers that see the
// size before reading.
func TooLarge() *Error {
	return malformed("", nil, "the lifecycle configuration is larger than %d bytes", MaxBodySize)
}

var bom = []byte("\xef\xbb\xbf")

// Validate checks body against the schema, the first layer only.
func Validate(body []byte) error {
	_, err := validate(body)
	return err
}

func validate(body []byte) (*xsd.Document, error) {
	s, err := schema()
	if err != nil {
		return nil, fmt.Errorf("lifecycledoc: reading the embedded schema: %w", err)
	}
	if len(body) > MaxBodySize {
		return nil, TooLarge()
	}
	body = bytes.TrimPrefix(body, bom)
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, malformed("", nil, "the request body is empty; a LifecycleConfiguration is required")
	}
	if !utf8.Valid(body) {
		return nil, malformed("", nil, "the request body is not valid UTF-8")
	}
	doc, err := s.Validate(xml.NewDecoder(bytes.NewReader(body)), xsd.Options{MaxDepth: MaxDepth, MaxElements: MaxElements, Namespaces: Namespaces})
	if err != nil {
		var xe *xsd.Error
		if errors.As(err, &xe) {
			if xe.Kind == xsd.ErrRange {
				return nil, &Error{Code: CodeInvalidArgument, Status: http.StatusBadRequest, Element: xe.Element, Message: xe.Message, Err: err}
			}
			return nil, malformed(xe.Element, err,
				"the XML you provided was not well-formed or did not validate against the lifecycle schema: %s", xe.Message)
		}
		return nil, malformed("", err, "the XML you provided could not be read: %v", err)
	}
	return doc, nil
}

// Decode checks body against the schema and returns the configuration it holds.
func Decode(body []byte) (*lifecycle.LifecycleConfiguration, error) {
	doc, err := validate(body)
	if err != nil {
		return nil, err
	}
	var cfg lifecycle.LifecycleConfiguration
	if err := doc.Decode(&cfg); err != nil {
		// The schema admits only values the types can hold, so this is a bug in the
		// schema or the generator; still the client's document is what failed.
		return nil, malformed("", err, "the lifecycle configuration could not be decoded: %v", err)
	}
	return &cfg, nil
}

// Parse reads, validates, decodes and checks a request body for a bucket with or
// without versioning: ReadBody, Decode, then Check.
func Parse(r io.Reader, versioned bool) (*lifecycle.LifecycleConfiguration, error) {
	body, err := ReadBody(r)
	if err != nil {
		return nil, err
	}
	cfg, err := Decode(body)
	if err != nil {
		return nil, err
	}
	if err := Check(cfg, versioned); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Marshal writes cfg as the XML document the service stores and returns, with
// the XML declaration.
func Marshal(cfg *lifecycle.LifecycleConfiguration) ([]byte, error) {
	out, err := xml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("lifecycledoc: marshalling: %w", err)
	}
	return append([]byte(xml.Header), out...), nil
}

// Value checks body against the schema and returns its content as the generic
// value (maps, []any, strings, bools, int64s) that an OpenAPI schema validator
// checks: the request-body decoder of the storage API's spec validation.
func Value(body []byte) (map[string]any, error) {
	doc, err := validate(body)
	if err != nil {
		return nil, err
	}
	return doc.Value(), nil
}
