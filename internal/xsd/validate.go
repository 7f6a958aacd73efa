package xsd

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// NamespaceXSI is the namespace of the schema-instance attributes (xsi:type, ...).
const NamespaceXSI = "http://www.w3.org/2001/XMLSchema-instance"

// ErrorKind classifies a validation failure, so that callers can answer each kind
// with their protocol's error code.
type ErrorKind int

// The kinds of validation failure.
const (
	// ErrSyntax: the input is not a well-formed XML document, holds a document type
	// declaration, or nests deeper than allowed.
	ErrSyntax ErrorKind = iota + 1
	// ErrStructure: an element, attribute or text the content model does not allow,
	// or a required element missing.
	ErrStructure
	// ErrValue: a value that is not in its type's lexical space, not one of the
	// enumerated values, or that does not match a pattern.
	ErrValue
	// ErrRange: a well-formed value outside a length or inclusive bound.
	ErrRange
)

// String names the kind.
func (k ErrorKind) String() string {
	switch k {
	case ErrSyntax:
		return "syntax"
	case ErrStructure:
		return "structure"
	case ErrValue:
		return "value"
	case ErrRange:
		return "range"
	}
	return fmt.Sprintf("ErrorKind(%d)", int(k))
}

// Error is a validation failure.
type Error struct {
	// Kind classifies the failure.
	Kind ErrorKind
	// Element is the local name of the element the failure is about, when there is one.
	Element string
	// Line is the line of the input where the failure was found.
	Line int
	// Message describes the failure, naming the element.
	Message string
	// Err is the underlying error, such as the XML decoder's syntax error.
	Err error
}

// Error returns the message with its line.
func (e *Error) Error() string {
	return fmt.Sprintf("line %d: %s", e.Line, e.Message)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Options bound the work Validate does.
type Options struct {
	// MaxDepth is the deepest element nesting accepted (the root is depth 1); 0 means 64.
	MaxDepth int
	// Namespaces are other namespaces a document may be written in instead of the
	// schema's target namespace ("" is no namespace). The root element's
	// namespace decides the document's, and every element must be in that one
	// namespace: the document is then validated, and its Document holds it, as
	// if it were written in the target namespace. It is what validating against
	// copies of the schema that differ only in their targetNamespace (one per
	// accepted namespace, none for "") would accept, chosen by the root.
	Namespaces []string
	// MaxElements is the most elements a document may hold, the root
	// included; 0 means no limit. The element past it is refused as it
	// arrives, so a document's size in memory is bounded by the count
	// rather than by its length.
	MaxElements int
}

// Document is a validated document: its elements and their whitespace-normalized
// values, without comments, processing instructions or ignorable whitespace.
type Document struct {
	root   *Element
	tokens []xml.Token
}

// Value returns the content of the root element as the generic value an
// OpenAPI schema validator checks (the shape encoding/json gives JSON): each
// complex element a map keyed by child element name, a child that may repeat
// always a []any, and each value typed by its built-in type (string, bool,
// int64; xs:dateTime as its normalized text).
func (d *Document) Value() map[string]any {
	i := 1 // tokens[0] is the root's start
	return d.complex(d.root.Complex, &i)
}

func (d *Document) complex(ct *ComplexType, i *int) map[string]any {
	out := map[string]any{}
	for *i < len(d.tokens) {
		start, ok := d.tokens[*i].(xml.StartElement)
		*i++
		if !ok { // the end of this element
			return out
		}
		child, _ := ct.Child(start.Name.Local)
		var v any
		if child.Simple != nil {
			v = child.Simple.typed(string(d.tokens[*i].(xml.CharData)))
			*i += 2 // the value and the end
		} else {
			v = d.complex(child.Complex, i)
		}
		if ct.Repeated(child.Name) {
			list, _ := out[child.Name].([]any)
			out[child.Name] = append(list, v)
		} else {
			out[child.Name] = v
		}
	}
	return out
}

// typed converts a validated, normalized value to its Go form.
func (st *SimpleType) typed(value string) any {
	switch st.Base {
	case Boolean:
		return value == "true" || value == "1"
	case Int, Long:
		n, _ := strconv.ParseInt(value, 10, 64)
		return n
	}
	return value
}

// Decode unmarshals the validated document into v with encoding/xml, so that v
// receives exactly the values that were validated.
func (d *Document) Decode(v any) error {
	if err := xml.NewTokenDecoder(&tokenList{tokens: d.tokens}).Decode(v); err != nil {
		return fmt.Errorf("xsd: decoding the validated document: %w", err)
	}
	return nil
}

type tokenList struct {
	tokens []xml.Token
	next   int
}

func (t *tokenList) Token() (xml.Token, error) {
	if t.next >= len(t.tokens) {
		return nil, io.EOF
	}
	tok := t.tokens[t.next]
	t.next++
	return tok, nil
}

// Validate reads one whole document from d and checks it against the schema. It
// never expands entities beyond XML's predefined ones and refuses any document type
// declaration. d should be a fresh decoder with its default settings (Strict, no
// Entity map, no CharsetReader); the caller bounds the input's size.
func (s *Schema) Validate(d *xml.Decoder, opts Options) (*Document, error) {
	v := &validator{s: s, d: d, maxDepth: opts.MaxDepth, maxElements: opts.MaxElements, namespaces: opts.Namespaces, docNS: s.TargetNamespace}
	if v.maxDepth <= 0 {
		v.maxDepth = 64
	}
	if err := v.document(); err != nil {
		return nil, err
	}
	return &Document{root: v.rootElement, tokens: v.out}, nil
}

type validator struct {
	s           *Schema
	rootElement *Element
	d           *xml.Decoder
	maxDepth    int
	depth       int
	maxElements int
	elements    int
	// namespaces are the accepted namespaces besides the target one; docNS is
	// the namespace the document's root chose.
	namespaces []string
	docNS      string
	out        []xml.Token
}

func (v *validator) fail(kind ErrorKind, element string, err error, format string, args ...any) *Error {
	line, _ := v.d.InputPos()
	return &Error{Kind: kind, Element: element, Line: line, Message: fmt.Sprintf(format, args...), Err: err}
}

// next returns the next token, turning the decoder's errors into ErrSyntax.
func (v *validator) next(element string) (xml.Token, error) {
	tok, err := v.d.Token()
	if errors.Is(err, io.EOF) {
		if element == "" {
			return nil, io.EOF
		}
		return nil, v.fail(ErrSyntax, element, err, "the document ends inside element %s", element)
	}
	if err != nil {
		return nil, v.fail(ErrSyntax, element, err, "not well-formed XML: %v", err)
	}
	if dir, ok := tok.(xml.Directive); ok {
		word, _, _ := strings.Cut(strings.TrimSpace(string(dir)), " ")
		return nil, v.fail(ErrSyntax, element, nil, "declarations such as <!%s are not allowed", word)
	}
	return tok, nil
}

func isSpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

func (v *validator) document() error {
	first := true
	for {
		tok, err := v.next("")
		if errors.Is(err, io.EOF) {
			return v.fail(ErrSyntax, "", nil, "the document is empty: no root element")
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.ProcInst:
			if strings.EqualFold(t.Target, "xml") && !first {
				return v.fail(ErrSyntax, "", nil, "the XML declaration is allowed only at the start of the document")
			}
		case xml.Comment:
		case xml.CharData:
			if !isSpace(t) {
				return v.fail(ErrSyntax, "", nil, "text before the root element")
			}
		case xml.StartElement:
			if err := v.root(t); err != nil {
				return err
			}
			return v.epilog()
		}
		first = false
	}
}

func (v *validator) root(start xml.StartElement) error {
	if start.Name.Space == v.s.TargetNamespace || slices.Contains(v.namespaces, start.Name.Space) {
		v.docNS = start.Name.Space
		for _, e := range v.s.Elements {
			if e.Name == start.Name.Local {
				v.rootElement = e
				return v.element(e, start)
			}
		}
	}
	return v.fail(ErrStructure, start.Name.Local, nil, "the root element %s is not one of %s", qname(start.Name), v.rootNames())
}

func (v *validator) rootNames() string {
	var names []string
	for _, ns := range append([]string{v.s.TargetNamespace}, v.namespaces...) {
		for _, e := range v.s.Elements {
			names = append(names, qname(xml.Name{Space: ns, Local: e.Name}))
		}
	}
	return strings.Join(names, ", ")
}

func qname(n xml.Name) string {
	if n.Space == "" {
		return n.Local + " (no namespace)"
	}
	return "{" + n.Space + "}" + n.Local
}

func (v *validator) epilog() error {
	for {
		tok, err := v.next("")
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.Comment:
		case xml.ProcInst:
			if strings.EqualFold(t.Target, "xml") {
				return v.fail(ErrSyntax, "", nil, "the XML declaration is allowed only at the start of the document")
			}
		case xml.CharData:
			if !isSpace(t) {
				return v.fail(ErrSyntax, "", nil, "text after the root element")
			}
		default:
			return v.fail(ErrSyntax, "", nil, "content after the root element")
		}
	}
}

func (v *validator) attributes(start xml.StartElement) error {
	for _, a := range start.Attr {
		switch {
		case a.Name.Space == "xmlns", a.Name.Space == "" && a.Name.Local == "xmlns":
			// A namespace declaration, not an attribute.
		case a.Name.Space == NamespaceXSI && (a.Name.Local == "schemaLocation" || a.Name.Local == "noNamespaceSchemaLocation"):
			// Location hints are allowed on any element and ignored.
		default:
			return v.fail(ErrStructure, start.Name.Local, nil, "element %s: attribute %s is not allowed", start.Name.Local, attrName(a.Name))
		}
	}
	return nil
}

func attrName(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return "{" + n.Space + "}" + n.Local
}

func (v *validator) element(e *Element, start xml.StartElement) error {
	v.depth++
	defer func() { v.depth-- }()
	if v.depth > v.maxDepth {
		return v.fail(ErrSyntax, e.Name, nil, "element %s nests deeper than %d levels", e.Name, v.maxDepth)
	}
	v.elements++
	if v.maxElements > 0 && v.elements > v.maxElements {
		return v.fail(ErrStructure, e.Name, nil, "the document holds more than %d elements", v.maxElements)
	}
	if err := v.attributes(start); err != nil {
		return err
	}
	v.out = append(v.out, xml.StartElement{Name: xml.Name{Space: v.s.TargetNamespace, Local: e.Name}})
	var err error
	if e.Simple != nil {
		err = v.simpleContent(e)
	} else {
		err = v.complexContent(e)
	}
	if err != nil {
		return err
	}
	v.out = append(v.out, xml.EndElement{Name: xml.Name{Space: v.s.TargetNamespace, Local: e.Name}})
	return nil
}

func (v *validator) simpleContent(e *Element) error {
	var text strings.Builder
	for {
		tok, err := v.next(e.Name)
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.CharData:
			text.Write(t)
		case xml.StartElement:
			return v.fail(ErrStructure, e.Name, nil, "element %s holds a value, not child elements (found %s)", e.Name, t.Name.Local)
		case xml.EndElement:
			value, kind, msg := e.Simple.Check(text.String())
			if kind != 0 {
				return v.fail(kind, e.Name, nil, "element %s: %s", e.Name, msg)
			}
			v.out = append(v.out, xml.CharData(value))
			return nil
		}
	}
}

func (v *validator) complexContent(e *Element) error {
	var names []string
	counts := map[string]int{}
	for {
		tok, err := v.next(e.Name)
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.CharData:
			if !isSpace(t) {
				return v.fail(ErrStructure, e.Name, nil, "element %s holds child elements, not text", e.Name)
			}
		case xml.StartElement:
			child, ok := e.Complex.Child(t.Name.Local)
			if !ok || t.Name.Space != v.docNS {
				return v.fail(ErrStructure, t.Name.Local, nil, "element %s is not allowed in %s%s", t.Name.Local, e.Name, v.namespaceNote(t.Name))
			}
			names = append(names, child.Name)
			counts[child.Name]++
			if most := e.Complex.MostOccurs(child.Name); most != Unbounded && counts[child.Name] > most {
				if most == 1 {
					return v.fail(ErrStructure, e.Name, nil, "element %s: child element %s occurs more than once; each child of %s is allowed at most once", e.Name, child.Name, e.Name)
				}
				return v.fail(ErrStructure, e.Name, nil, "element %s holds more than %d %s elements", e.Name, most, child.Name)
			}
			if err := v.element(child, t); err != nil {
				return err
			}
		case xml.EndElement:
			if err := matchContent(e, names); err != "" {
				return v.fail(ErrStructure, e.Name, nil, "%s", err)
			}
			return nil
		}
	}
}

func (v *validator) namespaceNote(n xml.Name) string {
	want := v.docNS
	if want == "" {
		want = "no namespace, as the root element"
	}
	switch {
	case n.Space == v.docNS:
		return ""
	case n.Space == "":
		return " (it has no namespace; expected " + want + ")"
	}
	return " (its namespace is " + n.Space + "; expected " + want + ")"
}

// matchContent checks the sequence of child names against e's content model and
// describes the first mismatch, or returns "".
func matchContent(e *Element, names []string) string {
	if e.Complex.Content.Kind == AllParticle {
		return matchAll(e, names)
	}
	m := &matcher{names: names}
	ends := m.particle(e.Complex.Content, 0)
	if slices.Contains(ends, len(names)) {
		return ""
	}
	expected := strings.Join(m.expected, ", ")
	if m.furthest < len(names) {
		if expected == "" {
			return fmt.Sprintf("element %s: child element %s is not expected here (out of order or repeated too often)", e.Name, names[m.furthest])
		}
		return fmt.Sprintf("element %s: child element %s is not expected here; expected %s", e.Name, names[m.furthest], expected)
	}
	return fmt.Sprintf("element %s is incomplete: expected %s", e.Name, expected)
}

// matchAll checks the child names of an element whose content model is an
// xs:all group: any order, each child at most once, every required child present
// (unless the group is optional and there are no children at all). Unknown
// children were refused before, as they arrived.
func matchAll(e *Element, names []string) string {
	all := e.Complex.Content
	if len(names) == 0 && all.Min == 0 {
		return ""
	}
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			return fmt.Sprintf("element %s: child element %s occurs more than once; each child of %s is allowed at most once", e.Name, name, e.Name)
		}
		seen[name] = true
	}
	var missing []string
	for _, p := range all.Particles {
		if p.Min > 0 && !seen[p.Element.Name] {
			missing = append(missing, p.Element.Name)
		}
	}
	if len(missing) > 0 {
		return fmt.Sprintf("element %s is incomplete: expected %s", e.Name, strings.Join(missing, ", "))
	}
	return ""
}

// matcher matches a list of child names against a content model, trying every
// way through it (a set of positions per step), and remembers the furthest
// position reached and the elements that were tried there, for the message.
type matcher struct {
	names    []string
	furthest int
	expected []string
}

func (m *matcher) reached(pos int) {
	if pos > m.furthest {
		m.furthest, m.expected = pos, nil
	}
}

func (m *matcher) missed(pos int, name string) {
	if pos > m.furthest {
		m.furthest, m.expected = pos, nil
	}
	if pos == m.furthest && !slices.Contains(m.expected, name) {
		m.expected = append(m.expected, name)
	}
}

// particle returns the positions where a match of p (with its occurrence bounds)
// starting at pos can end.
func (m *matcher) particle(p *Particle, pos int) []int {
	var ends []int
	if p.Min == 0 {
		ends = append(ends, pos)
	}
	current := []int{pos}
	limit := p.Max
	if limit == Unbounded {
		// Each useful repetition beyond Min consumes at least one name.
		limit = p.Min + len(m.names) - pos + 1
	}
	for i := 1; i <= limit && len(current) > 0; i++ {
		var next []int
		for _, c := range current {
			for _, end := range m.once(p, c) {
				if !slices.Contains(next, end) {
					next = append(next, end)
				}
			}
		}
		if i >= p.Min {
			for _, end := range next {
				if !slices.Contains(ends, end) {
					ends = append(ends, end)
				}
			}
		}
		current = next
	}
	return ends
}

// once returns the positions where one occurrence of p starting at pos can end.
func (m *matcher) once(p *Particle, pos int) []int {
	switch p.Kind {
	case ElementParticle:
		if pos < len(m.names) && m.names[pos] == p.Element.Name {
			m.reached(pos + 1)
			return []int{pos + 1}
		}
		m.missed(pos, p.Element.Name)
		return nil
	case SequenceParticle:
		current := []int{pos}
		for _, child := range p.Particles {
			var next []int
			for _, c := range current {
				for _, end := range m.particle(child, c) {
					if !slices.Contains(next, end) {
						next = append(next, end)
					}
				}
			}
			current = next
		}
		return current
	case ChoiceParticle:
		var ends []int
		for _, child := range p.Particles {
			for _, end := range m.particle(child, pos) {
				if !slices.Contains(ends, end) {
					ends = append(ends, end)
				}
			}
		}
		return ends
	}
	return nil
}

// Check validates a value of the type as it appears in a document and returns it
// whitespace-normalized (xs:string values are kept as they are, xs:boolean and
// xs:dateTime values have their whitespace collapsed, integers must have none). On failure kind is ErrValue or ErrRange and msg says why.
func (st *SimpleType) Check(raw string) (value string, kind ErrorKind, msg string) {
	value = raw
	switch st.Base {
	case Boolean, DateTime:
		value = collapse(raw)
	case Int, Long:
		// XML Schema collapses whitespace here too, but libxml2 (xmllint) refuses
		// an integer with surrounding whitespace, and the two must agree; no
		// writer of this protocol pads numbers.
		if strings.ContainsAny(raw, " \t\n\r") {
			return "", ErrValue, fmt.Sprintf("%q is not an integer of %s: whitespace around a number is not accepted", raw, st.Base)
		}
	}
	if !utf8.ValidString(value) {
		return "", ErrValue, "the value is not valid UTF-8"
	}
	var n int64
	switch st.Base {
	case Boolean:
		switch value {
		case "true", "false", "1", "0":
		default:
			return "", ErrValue, fmt.Sprintf("%q is not a boolean (true, false, 1 or 0)", value)
		}
	case Int, Long:
		bits := 32
		if st.Base == Long {
			bits = 64
		}
		var err error
		if n, err = parseInteger(value, bits); err != nil {
			return "", ErrValue, fmt.Sprintf("%q is not an integer of %s: %v", value, st.Base, err)
		}
	case DateTime:
		if err := checkDateTime(value); err != nil {
			return "", ErrValue, fmt.Sprintf("%q is not an xs:dateTime: %v", value, err)
		}
	}
	if len(st.Enumeration) > 0 && !slices.Contains(st.Enumeration, value) {
		return "", ErrValue, fmt.Sprintf("%q is not one of %s", value, strings.Join(st.Enumeration, ", "))
	}
	for _, p := range st.Patterns {
		if !p.re.MatchString(value) {
			return "", ErrValue, fmt.Sprintf("%q does not match the pattern %s", value, p.Source)
		}
	}
	length := utf8.RuneCountInString(value)
	if st.MinLength >= 0 && length < st.MinLength {
		return "", ErrRange, fmt.Sprintf("the value is %d characters long; the minimum is %d", length, st.MinLength)
	}
	if st.MaxLength >= 0 && length > st.MaxLength {
		return "", ErrRange, fmt.Sprintf("the value is %d characters long; the maximum is %d", length, st.MaxLength)
	}
	if st.MinInclusive != nil && n < *st.MinInclusive {
		return "", ErrRange, fmt.Sprintf("%d is below the minimum %d", n, *st.MinInclusive)
	}
	if st.MaxInclusive != nil && n > *st.MaxInclusive {
		return "", ErrRange, fmt.Sprintf("%d is above the maximum %d", n, *st.MaxInclusive)
	}
	return value, 0, ""
}

// collapse applies XML Schema's whiteSpace="collapse": tabs, newlines and carriage
// returns become spaces, runs of spaces become one, and leading and trailing spaces
// go. Only those four characters are XML whitespace.
func collapse(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r'
	}), " ")
}

func parseInteger(s string, bits int) (int64, error) {
	digits := strings.TrimLeft(s, "+-")
	if len(s)-len(digits) > 1 || digits == "" {
		return 0, errors.New("bad sign or no digits")
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, errors.New("not a decimal number")
		}
	}
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		return 0, errors.New("out of range")
	}
	return n, nil
}

// checkDateTime checks the lexical form of xs:dateTime (XML Schema 1.0 part 2,
// 3.2.7): -?yyyy-mm-ddThh:mm:ss(.s+)?(Z|(+|-)hh:mm)? with a real calendar day.
func checkDateTime(s string) error {
	rest := strings.TrimPrefix(s, "-")
	yearEnd := strings.IndexByte(rest, '-')
	if yearEnd < 4 {
		return errors.New("the year needs at least four digits")
	}
	yearText := rest[:yearEnd]
	if !allDigits(yearText) || (len(yearText) > 4 && yearText[0] == '0') {
		return errors.New("bad year")
	}
	year, err := strconv.ParseInt(yearText, 10, 64)
	if err != nil || year == 0 {
		return errors.New("bad year (year 0000 does not exist)")
	}
	rest = rest[yearEnd:]
	// -mm-ddThh:mm:ss
	if len(rest) < 15 || rest[0] != '-' || rest[3] != '-' || rest[6] != 'T' || rest[9] != ':' || rest[12] != ':' {
		return errors.New("expected -mm-ddThh:mm:ss after the year")
	}
	month, ok1 := twoDigits(rest[1:3])
	day, ok2 := twoDigits(rest[4:6])
	hour, ok3 := twoDigits(rest[7:9])
	minute, ok4 := twoDigits(rest[10:12])
	second, ok5 := twoDigits(rest[13:15])
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
		return errors.New("expected two digits for each of month, day, hour, minute and second")
	}
	rest = rest[15:]
	fractionZero := true
	if strings.HasPrefix(rest, ".") {
		end := 1
		for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
			if rest[end] != '0' {
				fractionZero = false
			}
			end++
		}
		if end == 1 {
			return errors.New("a decimal point needs digits after it")
		}
		rest = rest[end:]
	}
	switch {
	case rest == "" || rest == "Z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		tzh, ok1 := twoDigits(rest[1:3])
		tzm, ok2 := twoDigits(rest[4:6])
		if !ok1 || !ok2 || tzm > 59 || tzh > 14 || (tzh == 14 && tzm != 0) {
			return errors.New("bad time zone (at most ±14:00)")
		}
	default:
		return errors.New("bad time zone")
	}
	if month < 1 || month > 12 {
		return errors.New("month out of range")
	}
	if day < 1 || day > daysIn(year, month) {
		return errors.New("day out of range for the month")
	}
	if hour == 24 {
		if minute != 0 || second != 0 || !fractionZero {
			return errors.New("24 is allowed only as 24:00:00")
		}
	} else if hour > 23 || minute > 59 || second > 59 {
		return errors.New("time out of range")
	}
	return nil
}

func allDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

func twoDigits(s string) (int, bool) {
	if len(s) != 2 || !allDigits(s) {
		return 0, false
	}
	return int(s[0]-'0')*10 + int(s[1]-'0'), true
}

func daysIn(year int64, month int) int {
	switch month {
	case 2:
		// Year -1 is 1 BCE, a leap year in the proleptic Gregorian calendar of XML Schema 1.0.
		y := year
		if y < 0 {
			y++
		}
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
