// Package xsd reads the small subset of XML Schema 1.0 that apistack's schemas use
// (specs/storage/lifecycle.xsd) and validates documents against it.
//
// It exists because no XSD library for Go is available to the build: the type
// generator (gen/internal/xsdgen) and the storage server's validator
// (internal/lifecycledoc) both read the schema through this one package, so
// the generated Go types and the server's checks come from a single reading of the
// same file, and a parity test keeps the validator in agreement with xmllint.
//
// The subset: one xs:schema with a targetNamespace and elementFormDefault="qualified";
// top-level xs:element declarations naming a type; named xs:complexType made of
// xs:sequence, xs:choice and xs:element with minOccurs and maxOccurs, or an xs:all
// of elements (no attributes, no mixed content); named xs:simpleType restricting xs:string, xs:boolean, xs:int,
// xs:long or xs:dateTime with the enumeration, minLength, maxLength, minInclusive,
// maxInclusive and pattern facets; xs:annotation/xs:documentation anywhere it is
// allowed. Anything else is a parse error, so a schema edit beyond the subset fails
// loudly at generation time rather than being half understood.
package xsd

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// NamespaceXSD is the namespace of XML Schema itself.
const NamespaceXSD = "http://www.w3.org/2001/XMLSchema"

// Unbounded is the Max of a particle with maxOccurs="unbounded".
const Unbounded = -1

// Builtin is a built-in simple type the subset supports.
type Builtin int

// The built-in types of the subset.
const (
	String Builtin = iota + 1
	Boolean
	Int
	Long
	DateTime
)

var builtinNames = map[string]Builtin{
	"string":   String,
	"boolean":  Boolean,
	"int":      Int,
	"long":     Long,
	"dateTime": DateTime,
}

// String returns the type's name in XML Schema, such as "xs:int".
func (b Builtin) String() string {
	for name, v := range builtinNames {
		if v == b {
			return "xs:" + name
		}
	}
	return fmt.Sprintf("Builtin(%d)", int(b))
}

// Schema is a parsed schema.
type Schema struct {
	// TargetNamespace is the namespace of every element the schema declares.
	TargetNamespace string
	// Elements are the top-level element declarations: the allowed roots.
	Elements []*Element
	// ComplexTypes are the named complex types, in document order.
	ComplexTypes []*ComplexType
	// SimpleTypes are the named simple types, in document order.
	SimpleTypes []*SimpleType
}

// Element is an element declaration.
type Element struct {
	// Name is the element's local name; its namespace is the schema's target namespace.
	Name string
	// Doc is the text of the declaration's xs:documentation.
	Doc string
	// Complex is the element's type when it is a complex type.
	Complex *ComplexType
	// Simple is the element's type when it is a simple type.
	Simple *SimpleType
}

// ComplexType is a named complex type with element-only content.
type ComplexType struct {
	// Name is the type's name.
	Name string
	// Doc is the text of the type's xs:documentation.
	Doc string
	// Content is the content model: a sequence, a choice or an all group.
	Content *Particle

	children map[string]*Element
	repeated map[string]bool
	seen     map[string]bool
	// most is how often each child may occur at most in the content model
	// (Unbounded when without limit): the validator refuses the next one as
	// it arrives, before reading it.
	most map[string]int
}

// MostOccurs returns how often the child element called name may occur at
// most in one element of this type, Unbounded when without limit, 0 when the
// content model has no such child.
func (c *ComplexType) MostOccurs(name string) int {
	return c.most[name]
}

// markMost adds to c.most the occurrences p allows, times factor (the
// product of the maxOccurs of the groups around p).
func (c *ComplexType) markMost(p *Particle, factor int) {
	if factor != Unbounded {
		if p.Max == Unbounded {
			factor = Unbounded
		} else {
			factor *= p.Max
		}
	}
	if p.Kind == ElementParticle {
		switch have := c.most[p.Element.Name]; {
		case have == Unbounded || factor == Unbounded:
			c.most[p.Element.Name] = Unbounded
		default:
			c.most[p.Element.Name] = have + factor
		}
		return
	}
	for _, child := range p.Particles {
		c.markMost(child, factor)
	}
}

// Repeated reports whether the child element called name may occur more than
// once (its particle, or a group around it, has maxOccurs above 1).
func (c *ComplexType) Repeated(name string) bool {
	return c.repeated[name]
}

func (c *ComplexType) markRepeated(p *Particle, repeated bool) {
	repeated = repeated || p.Max == Unbounded || p.Max > 1
	if p.Kind == ElementParticle {
		if repeated || c.seen[p.Element.Name] {
			c.repeated[p.Element.Name] = true
		}
		c.seen[p.Element.Name] = true
		return
	}
	for _, child := range p.Particles {
		c.markRepeated(child, repeated)
	}
}

// Child returns the declaration of the child element called name, if the content
// model has one. A content model never declares two elements of one name with
// different types (the schema rule "Element Declarations Consistent").
func (c *ComplexType) Child(name string) (*Element, bool) {
	e, ok := c.children[name]
	return e, ok
}

// ParticleKind says what a particle is.
type ParticleKind int

// The kinds of particle.
const (
	ElementParticle ParticleKind = iota + 1
	SequenceParticle
	ChoiceParticle
	// AllParticle is an xs:all group: its elements in any order, each at most
	// once (XML Schema 1.0). It is always the whole content model of its type,
	// its Min is 0 or 1, its Max 1, and each of its elements has Min 0 or 1 and Max 1.
	AllParticle
)

// Particle is one term of a content model with its occurrence bounds.
type Particle struct {
	// Kind says whether this is an element, a sequence, a choice or an all group.
	Kind ParticleKind
	// Min is minOccurs.
	Min int
	// Max is maxOccurs, Unbounded for "unbounded".
	Max int
	// Element is the declaration of an ElementParticle.
	Element *Element
	// Particles are the terms of a sequence, a choice or an all group.
	Particles []*Particle
}

// SimpleType is a simple type: a built-in type, possibly restricted by facets.
type SimpleType struct {
	// Name is the type's name; empty when an element uses a built-in type directly.
	Name string
	// Doc is the text of the type's xs:documentation.
	Doc string
	// Base is the built-in type restricted.
	Base Builtin
	// Enumeration lists the allowed values; empty means any value of Base.
	Enumeration []string
	// MinLength and MaxLength bound the length in characters; -1 when absent.
	MinLength, MaxLength int
	// MinInclusive and MaxInclusive bound integer values; nil when absent.
	MinInclusive, MaxInclusive *int64
	// Patterns are the pattern facets; a value must match every one.
	Patterns []Pattern
}

// Pattern is a pattern facet.
type Pattern struct {
	// Source is the facet's regular expression as written in the schema.
	Source string
	re     *regexp.Regexp
}

// Parse reads a schema written in the subset this package supports.
func Parse(src []byte) (*Schema, error) {
	root, err := readTree(src)
	if err != nil {
		return nil, fmt.Errorf("xsd: %w", err)
	}
	p := &parser{complex: map[string]*ComplexType{}, simple: map[string]*SimpleType{}}
	s, err := p.schema(root)
	if err != nil {
		return nil, fmt.Errorf("xsd: %w", err)
	}
	return s, nil
}

// node is an element of the schema document.
type node struct {
	name     xml.Name
	attrs    map[string]string
	ns       map[string]string // prefix -> namespace, inherited
	children []*node
	text     string
	line     int
}

func (n *node) attr(name string) (string, bool) {
	v, ok := n.attrs[name]
	return v, ok
}

func (n *node) errorf(format string, args ...any) error {
	return fmt.Errorf("line %d: %s: %s", n.line, n.name.Local, fmt.Sprintf(format, args...))
}

func readTree(src []byte) (*node, error) {
	d := xml.NewDecoder(bytes.NewReader(src))
	var stack []*node
	var root *node
	for {
		line, _ := d.InputPos()
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the schema: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &node{name: t.Name, attrs: map[string]string{}, ns: map[string]string{}, line: line}
			if len(stack) > 0 {
				parent := stack[len(stack)-1]
				for k, v := range parent.ns {
					n.ns[k] = v
				}
				parent.children = append(parent.children, n)
			} else {
				root = n
			}
			for _, a := range t.Attr {
				switch {
				case a.Name.Space == "xmlns":
					n.ns[a.Name.Local] = a.Value
				case a.Name.Space == "" && a.Name.Local == "xmlns":
					n.ns[""] = a.Value
				case a.Name.Space == "":
					n.attrs[a.Name.Local] = a.Value
				default:
					return nil, fmt.Errorf("line %d: attribute %s:%s is outside the supported subset", line, a.Name.Space, a.Name.Local)
				}
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(t)
			}
		}
	}
	if root == nil {
		return nil, errors.New("no schema element")
	}
	return root, nil
}

type parser struct {
	target  string
	complex map[string]*ComplexType
	simple  map[string]*SimpleType
}

func isXS(n *node, local string) bool {
	return n.name.Space == NamespaceXSD && n.name.Local == local
}

func (p *parser) schema(root *node) (*Schema, error) {
	if !isXS(root, "schema") {
		return nil, root.errorf("the root is not xs:schema")
	}
	s := &Schema{}
	for k := range root.attrs {
		switch k {
		case "targetNamespace", "elementFormDefault":
		default:
			return nil, root.errorf("attribute %s is outside the supported subset", k)
		}
	}
	s.TargetNamespace = root.attrs["targetNamespace"]
	if s.TargetNamespace == "" {
		return nil, root.errorf("a targetNamespace is required")
	}
	if root.attrs["elementFormDefault"] != "qualified" {
		return nil, root.errorf(`elementFormDefault="qualified" is required`)
	}
	p.target = s.TargetNamespace
	// Declare every named type first so that references may point forward.
	for _, c := range root.children {
		switch {
		case isXS(c, "complexType"):
			name, err := requiredName(c)
			if err != nil {
				return nil, err
			}
			if p.complex[name] != nil || p.simple[name] != nil {
				return nil, c.errorf("type %s is declared twice", name)
			}
			ct := &ComplexType{Name: name, children: map[string]*Element{}}
			p.complex[name] = ct
			s.ComplexTypes = append(s.ComplexTypes, ct)
		case isXS(c, "simpleType"):
			name, err := requiredName(c)
			if err != nil {
				return nil, err
			}
			if p.complex[name] != nil || p.simple[name] != nil {
				return nil, c.errorf("type %s is declared twice", name)
			}
			st := &SimpleType{Name: name, MinLength: -1, MaxLength: -1}
			p.simple[name] = st
			s.SimpleTypes = append(s.SimpleTypes, st)
		case isXS(c, "element"), isXS(c, "annotation"):
		default:
			return nil, c.errorf("outside the supported subset")
		}
	}
	for _, c := range root.children {
		switch {
		case isXS(c, "complexType"):
			if err := p.complexType(c, p.complex[c.attrs["name"]]); err != nil {
				return nil, err
			}
		case isXS(c, "simpleType"):
			if err := p.simpleType(c, p.simple[c.attrs["name"]]); err != nil {
				return nil, err
			}
		case isXS(c, "element"):
			e, err := p.element(c, true)
			if err != nil {
				return nil, err
			}
			s.Elements = append(s.Elements, e)
		}
	}
	if len(s.Elements) == 0 {
		return nil, root.errorf("no top-level element")
	}
	return s, nil
}

func requiredName(n *node) (string, error) {
	name, ok := n.attr("name")
	if !ok || name == "" {
		return "", n.errorf("a name is required")
	}
	return name, nil
}

// documentation returns the text of n's xs:annotation/xs:documentation and the
// other children.
func documentation(n *node) (string, []*node, error) {
	var doc string
	var rest []*node
	for _, c := range n.children {
		if !isXS(c, "annotation") {
			rest = append(rest, c)
			continue
		}
		for _, d := range c.children {
			if !isXS(d, "documentation") {
				return "", nil, d.errorf("outside the supported subset")
			}
			doc = strings.Join(strings.Fields(d.text), " ")
		}
	}
	return doc, rest, nil
}

func onlyAttrs(n *node, allowed ...string) error {
	for k := range n.attrs {
		found := false
		for _, a := range allowed {
			found = found || a == k
		}
		if !found {
			return n.errorf("attribute %s is outside the supported subset", k)
		}
	}
	return nil
}

func (p *parser) complexType(n *node, ct *ComplexType) error {
	if err := onlyAttrs(n, "name"); err != nil {
		return err
	}
	doc, rest, err := documentation(n)
	if err != nil {
		return err
	}
	ct.Doc = doc
	if len(rest) != 1 || (!isXS(rest[0], "sequence") && !isXS(rest[0], "choice") && !isXS(rest[0], "all")) {
		return n.errorf("the content must be one xs:sequence, xs:choice or xs:all")
	}
	if isXS(rest[0], "all") {
		ct.Content, err = p.all(rest[0], ct)
	} else {
		ct.Content, err = p.particle(rest[0], ct)
	}
	if err != nil {
		return err
	}
	ct.repeated, ct.seen = map[string]bool{}, map[string]bool{}
	ct.markRepeated(ct.Content, false)
	ct.most = map[string]int{}
	ct.markMost(ct.Content, 1)
	return nil
}

func occurs(n *node) (lo, hi int, err error) {
	lo, hi = 1, 1
	if v, ok := n.attr("minOccurs"); ok {
		lo, err = strconv.Atoi(v)
		if err != nil || lo < 0 {
			return 0, 0, n.errorf("bad minOccurs %q", v)
		}
	}
	if v, ok := n.attr("maxOccurs"); ok {
		if v == "unbounded" {
			hi = Unbounded
		} else if hi, err = strconv.Atoi(v); err != nil || hi < 1 {
			return 0, 0, n.errorf("bad maxOccurs %q", v)
		}
	}
	if hi != Unbounded && hi < lo {
		return 0, 0, n.errorf("maxOccurs is below minOccurs")
	}
	return lo, hi, nil
}

func (p *parser) particle(n *node, owner *ComplexType) (*Particle, error) {
	lo, hi, err := occurs(n)
	if err != nil {
		return nil, err
	}
	switch {
	case isXS(n, "element"):
		e, err := p.element(n, false)
		if err != nil {
			return nil, err
		}
		if prev, ok := owner.children[e.Name]; ok && (prev.Complex != e.Complex || prev.Simple != e.Simple) {
			return nil, n.errorf("element %s is declared twice in %s with different types", e.Name, owner.Name)
		}
		if prev, ok := owner.children[e.Name]; ok {
			e = prev
		}
		owner.children[e.Name] = e
		return &Particle{Kind: ElementParticle, Min: lo, Max: hi, Element: e}, nil
	case isXS(n, "sequence"), isXS(n, "choice"):
		if err := onlyAttrs(n, "minOccurs", "maxOccurs"); err != nil {
			return nil, err
		}
		kind := SequenceParticle
		if n.name.Local == "choice" {
			kind = ChoiceParticle
		}
		_, rest, err := documentation(n)
		if err != nil {
			return nil, err
		}
		if len(rest) == 0 {
			return nil, n.errorf("an empty %s is outside the supported subset", n.name.Local)
		}
		part := &Particle{Kind: kind, Min: lo, Max: hi}
		for _, c := range rest {
			child, err := p.particle(c, owner)
			if err != nil {
				return nil, err
			}
			part.Particles = append(part.Particles, child)
		}
		return part, nil
	default:
		return nil, n.errorf("outside the supported subset")
	}
}

// all reads an xs:all group, which XML Schema 1.0 allows only as the whole
// content model of a type: minOccurs 0 or 1, maxOccurs 1, and only element
// children, each with minOccurs 0 or 1, maxOccurs 1 and a name of its own.
func (p *parser) all(n *node, owner *ComplexType) (*Particle, error) {
	if err := onlyAttrs(n, "minOccurs", "maxOccurs"); err != nil {
		return nil, err
	}
	lo, hi, err := occurs(n)
	if err != nil {
		return nil, err
	}
	if lo > 1 || hi != 1 {
		return nil, n.errorf("xs:all takes minOccurs 0 or 1 and maxOccurs 1")
	}
	_, rest, err := documentation(n)
	if err != nil {
		return nil, err
	}
	if len(rest) == 0 {
		return nil, n.errorf("an empty all is outside the supported subset")
	}
	part := &Particle{Kind: AllParticle, Min: lo, Max: hi}
	for _, c := range rest {
		if !isXS(c, "element") {
			return nil, c.errorf("only xs:element is allowed in xs:all")
		}
		if _, dup := owner.children[c.attrs["name"]]; dup {
			return nil, c.errorf("element %s is declared twice in the xs:all of %s", c.attrs["name"], owner.Name)
		}
		child, err := p.particle(c, owner)
		if err != nil {
			return nil, err
		}
		if child.Min > 1 || child.Max != 1 {
			return nil, c.errorf("an element of xs:all takes minOccurs 0 or 1 and maxOccurs 1")
		}
		part.Particles = append(part.Particles, child)
	}
	return part, nil
}

func (p *parser) element(n *node, topLevel bool) (*Element, error) {
	allowed := []string{"name", "type", "minOccurs", "maxOccurs"}
	if topLevel {
		allowed = allowed[:2]
	}
	if err := onlyAttrs(n, allowed...); err != nil {
		return nil, err
	}
	name, err := requiredName(n)
	if err != nil {
		return nil, err
	}
	doc, rest, err := documentation(n)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, n.errorf("anonymous types are outside the supported subset")
	}
	ref, ok := n.attr("type")
	if !ok {
		return nil, n.errorf("element %s has no type", name)
	}
	e := &Element{Name: name, Doc: doc}
	space, local := resolveQName(n, ref)
	switch space {
	case NamespaceXSD:
		b, ok := builtinNames[local]
		if !ok {
			return nil, n.errorf("built-in type xs:%s is outside the supported subset", local)
		}
		e.Simple = &SimpleType{Base: b, MinLength: -1, MaxLength: -1}
	case p.target:
		if ct := p.complex[local]; ct != nil {
			e.Complex = ct
		} else if st := p.simple[local]; st != nil {
			e.Simple = st
		} else {
			return nil, n.errorf("unknown type %s", ref)
		}
	default:
		return nil, n.errorf("type %s is in no known namespace", ref)
	}
	return e, nil
}

func resolveQName(n *node, qname string) (space, local string) {
	prefix, local, ok := strings.Cut(qname, ":")
	if !ok {
		return n.ns[""], qname
	}
	return n.ns[prefix], local
}

func (p *parser) simpleType(n *node, st *SimpleType) error {
	if err := onlyAttrs(n, "name"); err != nil {
		return err
	}
	doc, rest, err := documentation(n)
	if err != nil {
		return err
	}
	st.Doc = doc
	if len(rest) != 1 || !isXS(rest[0], "restriction") {
		return n.errorf("the content must be one xs:restriction")
	}
	r := rest[0]
	if err := onlyAttrs(r, "base"); err != nil {
		return err
	}
	space, local := resolveQName(r, r.attrs["base"])
	b, ok := builtinNames[local]
	if space != NamespaceXSD || !ok {
		return r.errorf("base %q is outside the supported subset", r.attrs["base"])
	}
	st.Base = b
	for _, f := range r.children {
		if isXS(f, "annotation") {
			continue
		}
		if f.name.Space != NamespaceXSD {
			return f.errorf("outside the supported subset")
		}
		if err := onlyAttrs(f, "value"); err != nil {
			return err
		}
		v, ok := f.attr("value")
		if !ok {
			return f.errorf("a value is required")
		}
		if err := st.addFacet(f, v); err != nil {
			return err
		}
	}
	return nil
}

func (st *SimpleType) addFacet(f *node, v string) error {
	numeric := st.Base == Int || st.Base == Long
	switch f.name.Local {
	case "enumeration":
		st.Enumeration = append(st.Enumeration, v)
	case "minLength", "maxLength":
		if numeric || st.Base == Boolean {
			return f.errorf("a length facet on %s", st.Base)
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return f.errorf("bad length %q", v)
		}
		if f.name.Local == "minLength" {
			st.MinLength = n
		} else {
			st.MaxLength = n
		}
	case "minInclusive", "maxInclusive":
		if !numeric {
			return f.errorf("an inclusive bound on %s is outside the supported subset", st.Base)
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return f.errorf("bad bound %q", v)
		}
		if f.name.Local == "minInclusive" {
			st.MinInclusive = &n
		} else {
			st.MaxInclusive = &n
		}
	case "pattern":
		// XML Schema patterns are anchored at both ends. The subset's patterns use
		// only syntax that means the same in RE2 (ASCII classes, groups, counts).
		if strings.Contains(v, `\d`) || strings.Contains(v, `\w`) || strings.Contains(v, `\p`) ||
			strings.Contains(v, `\i`) || strings.Contains(v, `\c`) || hasClassSubtraction(v) {
			return f.errorf("pattern %q uses syntax outside the supported subset", v)
		}
		re, err := regexp.Compile(`^(?:` + v + `)$`)
		if err != nil {
			return f.errorf("bad pattern %q: %v", v, err)
		}
		st.Patterns = append(st.Patterns, Pattern{Source: v, re: re})
	default:
		return f.errorf("facet %s is outside the supported subset", f.name.Local)
	}
	return nil
}

// hasClassSubtraction reports whether an XML Schema pattern subtracts character
// classes ("[a-z-[aeiou]]"), which RE2 does not have.
func hasClassSubtraction(pattern string) bool {
	inClass := false
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case c == '\\':
			i++
		case c == '[' && !inClass:
			inClass = true
		case c == ']' && inClass:
			inClass = false
		case c == '-' && inClass && i+1 < len(pattern) && pattern[i+1] == '[':
			return true
		}
	}
	return false
}
