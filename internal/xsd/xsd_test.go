package xsd_test

import (
	"encoding/xml"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/internal/xsd"
)

const ns = "urn:test"

// testSchema exercises every construct of the subset.
const testSchema = `<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:t="urn:test"
           targetNamespace="urn:test" elementFormDefault="qualified">
  <xs:element name="Root" type="t:Root"/>
  <xs:complexType name="Root">
    <xs:annotation><xs:documentation>Root is the root.</xs:documentation></xs:annotation>
    <xs:sequence>
      <xs:element name="Name" type="t:Name" minOccurs="0"/>
      <xs:choice>
        <xs:element name="A" type="xs:int"/>
        <xs:element name="B" type="t:Child"/>
      </xs:choice>
      <xs:element name="Item" type="t:Color" minOccurs="0" maxOccurs="3"/>
      <xs:element name="When" type="xs:dateTime" minOccurs="0"/>
      <xs:element name="Flag" type="xs:boolean" minOccurs="0"/>
    </xs:sequence>
  </xs:complexType>
  <xs:complexType name="Child">
    <xs:choice minOccurs="0">
      <xs:element name="Size" type="t:Size"/>
      <xs:element name="Code" type="t:Code"/>
    </xs:choice>
  </xs:complexType>
  <xs:simpleType name="Name">
    <xs:restriction base="xs:string"><xs:minLength value="1"/><xs:maxLength value="3"/></xs:restriction>
  </xs:simpleType>
  <xs:simpleType name="Color">
    <xs:restriction base="xs:string"><xs:enumeration value="red"/><xs:enumeration value="blue"/></xs:restriction>
  </xs:simpleType>
  <xs:simpleType name="Size">
    <xs:restriction base="xs:long"><xs:minInclusive value="1"/><xs:maxInclusive value="10"/></xs:restriction>
  </xs:simpleType>
  <xs:simpleType name="Code">
    <xs:restriction base="xs:string"><xs:pattern value="[A-Z]{2}[0-9]"/></xs:restriction>
  </xs:simpleType>
</xs:schema>`

func mustParse(t *testing.T) *xsd.Schema {
	t.Helper()
	s, err := xsd.Parse([]byte(testSchema))
	require.NoError(t, err)
	return s
}

func validate(s *xsd.Schema, doc string) (*xsd.Document, error) {
	return s.Validate(xml.NewDecoder(strings.NewReader(doc)), xsd.Options{})
}

func root(body string) string {
	return `<Root xmlns="urn:test">` + body + `</Root>`
}

func TestParse_ReadsTheSubset(t *testing.T) {
	s := mustParse(t)
	assert.Equal(t, ns, s.TargetNamespace)
	require.Len(t, s.Elements, 1)
	assert.Equal(t, "Root", s.Elements[0].Name)
	require.Len(t, s.ComplexTypes, 2)
	assert.Equal(t, "Root is the root.", s.ComplexTypes[0].Doc)
	content := s.ComplexTypes[0].Content
	assert.Equal(t, xsd.SequenceParticle, content.Kind)
	require.Len(t, content.Particles, 5)
	assert.Equal(t, xsd.ChoiceParticle, content.Particles[1].Kind)
	assert.Equal(t, 3, content.Particles[2].Max)
	item, ok := s.ComplexTypes[0].Child("Item")
	require.True(t, ok)
	assert.Equal(t, []string{"red", "blue"}, item.Simple.Enumeration)
}

func TestParse_RefusesWhatIsOutsideTheSubset(t *testing.T) {
	schema := func(body string) string {
		return `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:t="urn:test" targetNamespace="urn:test" elementFormDefault="qualified">` +
			`<xs:element name="R" type="t:R"/>` + body + `</xs:schema>`
	}
	tests := map[string]string{
		"attribute":            schema(`<xs:complexType name="R"><xs:sequence><xs:element name="A" type="xs:string"/></xs:sequence><xs:attribute name="x" type="xs:string"/></xs:complexType>`),
		"xs:all in a sequence": schema(`<xs:complexType name="R"><xs:sequence><xs:all><xs:element name="A" type="xs:string"/></xs:all></xs:sequence></xs:complexType>`),
		"repeated xs:all":      schema(`<xs:complexType name="R"><xs:all maxOccurs="2"><xs:element name="A" type="xs:string"/></xs:all></xs:complexType>`),
		"repeated in xs:all":   schema(`<xs:complexType name="R"><xs:all><xs:element name="A" type="xs:string" maxOccurs="unbounded"/></xs:all></xs:complexType>`),
		"choice in xs:all":     schema(`<xs:complexType name="R"><xs:all><xs:choice><xs:element name="A" type="xs:string"/></xs:choice></xs:all></xs:complexType>`),
		"twice in xs:all":      schema(`<xs:complexType name="R"><xs:all><xs:element name="A" type="xs:string"/><xs:element name="A" type="xs:string"/></xs:all></xs:complexType>`),
		"empty xs:all":         schema(`<xs:complexType name="R"><xs:all/></xs:complexType>`),
		"anonymous type":       schema(`<xs:complexType name="R"><xs:sequence><xs:element name="A"><xs:simpleType><xs:restriction base="xs:string"/></xs:simpleType></xs:element></xs:sequence></xs:complexType>`),
		"unknown builtin":      schema(`<xs:complexType name="R"><xs:sequence><xs:element name="A" type="xs:decimal"/></xs:sequence></xs:complexType>`),
		"unknown type":         schema(`<xs:complexType name="R"><xs:sequence><xs:element name="A" type="t:Nope"/></xs:sequence></xs:complexType>`),
		"unknown facet":        schema(`<xs:complexType name="R"><xs:sequence><xs:element name="A" type="t:S"/></xs:sequence></xs:complexType><xs:simpleType name="S"><xs:restriction base="xs:string"><xs:whiteSpace value="collapse"/></xs:restriction></xs:simpleType>`),
		"class subtraction":    schema(`<xs:complexType name="R"><xs:sequence><xs:element name="A" type="t:S"/></xs:sequence></xs:complexType><xs:simpleType name="S"><xs:restriction base="xs:string"><xs:pattern value="[a-z-[aeiou]]"/></xs:restriction></xs:simpleType>`),
		"unicode digit class":  schema(`<xs:complexType name="R"><xs:sequence><xs:element name="A" type="t:S"/></xs:sequence></xs:complexType><xs:simpleType name="S"><xs:restriction base="xs:string"><xs:pattern value="\d+"/></xs:restriction></xs:simpleType>`),
		"inconsistent element": schema(`<xs:complexType name="R"><xs:sequence><xs:element name="A" type="xs:string"/><xs:element name="A" type="xs:int"/></xs:sequence></xs:complexType>`),
		"bad maxOccurs":        schema(`<xs:complexType name="R"><xs:sequence><xs:element name="A" type="xs:string" minOccurs="2" maxOccurs="1"/></xs:sequence></xs:complexType>`),
		"no target namespace":  `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" elementFormDefault="qualified"/>`,
		"unqualified elements": `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:test"/>`,
	}
	for name, src := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := xsd.Parse([]byte(src))
			assert.Error(t, err)
		})
	}
}

func TestValidate_AcceptsValidDocumentsAndNormalizesValues(t *testing.T) {
	s := mustParse(t)
	doc, err := validate(s, `<?xml version="1.0" encoding="UTF-8"?>
<!-- a comment --><Root xmlns="urn:test"><Name>ab</Name><A>+0042</A><Item>red</Item><Item>blue</Item>
<When>2024-02-29T00:00:00Z</When><Flag> 1
</Flag></Root>`)
	require.NoError(t, err)
	var got struct {
		XMLName xml.Name `xml:"urn:test Root"`
		Name    string   `xml:"Name"`
		A       int32    `xml:"A"`
		Items   []string `xml:"Item"`
		Flag    bool     `xml:"Flag"`
	}
	require.NoError(t, doc.Decode(&got))
	assert.Equal(t, "ab", got.Name)
	assert.Equal(t, int32(42), got.A)
	assert.Equal(t, []string{"red", "blue"}, got.Items)
	assert.True(t, got.Flag)
}

func TestValidate_RejectsWithTheRightKindAndElement(t *testing.T) {
	s := mustParse(t)
	tests := []struct {
		name    string
		doc     string
		kind    xsd.ErrorKind
		element string
		message string
	}{
		{"empty", ``, xsd.ErrSyntax, "", "empty"},
		{"only a comment", `<!-- x -->`, xsd.ErrSyntax, "", "empty"},
		{"doctype", `<!DOCTYPE Root [<!ENTITY a "b">]>` + root(`<A>1</A>`), xsd.ErrSyntax, "", "DOCTYPE"},
		{"undeclared entity", root(`<Name>&a;</Name><A>1</A>`), xsd.ErrSyntax, "Name", "not well-formed"},
		{"unclosed", `<Root xmlns="urn:test"><A>1</A>`, xsd.ErrSyntax, "Root", "not well-formed"},
		{"trailing element", root(`<A>1</A>`) + `<Root/>`, xsd.ErrSyntax, "", "after the root"},
		{"trailing text", root(`<A>1</A>`) + `junk`, xsd.ErrSyntax, "", "after the root"},
		{"late xml declaration", ` <?xml version="1.0"?>` + root(`<A>1</A>`), xsd.ErrSyntax, "", "XML declaration"},
		{"wrong root", `<Other xmlns="urn:test"/>`, xsd.ErrStructure, "Other", "root element"},
		{"no namespace", `<Root><A>1</A></Root>`, xsd.ErrStructure, "Root", "no namespace"},
		{"child in another namespace", root(`<A xmlns="urn:other">1</A>`), xsd.ErrStructure, "A", "urn:other"},
		{"unknown child", root(`<A>1</A><Nope/>`), xsd.ErrStructure, "Nope", "Nope is not allowed in Root"},
		{"attribute", `<Root xmlns="urn:test" x="1"><A>1</A></Root>`, xsd.ErrStructure, "Root", "attribute x"},
		{"xsi:type", `<Root xmlns="urn:test" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="t:Root"><A>1</A></Root>`, xsd.ErrStructure, "Root", "attribute"},
		{"text in element-only content", root(`hello<A>1</A>`), xsd.ErrStructure, "Root", "not text"},
		{"child in a value", root(`<Name><A>1</A></Name><A>1</A>`), xsd.ErrStructure, "Name", "not child elements"},
		{"missing choice", root(`<Name>a</Name>`), xsd.ErrStructure, "Root", "expected A, B"},
		{"both of a choice", root(`<A>1</A><B/>`), xsd.ErrStructure, "Root", "B is not expected"},
		{"out of order", root(`<A>1</A><Name>a</Name>`), xsd.ErrStructure, "Root", "Name is not expected"},
		{"too many", root(`<A>1</A><Item>red</Item><Item>red</Item><Item>red</Item><Item>red</Item>`), xsd.ErrStructure, "Root", "more than 3 Item elements"},
		{"not an int", root(`<A>one</A>`), xsd.ErrValue, "A", "not an integer"},
		{"int out of range", root(`<A>2147483648</A>`), xsd.ErrValue, "A", "out of range"},
		{"double sign", root(`<A>+-1</A>`), xsd.ErrValue, "A", "not an integer"},
		{"whitespace around an integer", root(`<A> 1 </A>`), xsd.ErrValue, "A", "whitespace"},
		{"not in enumeration", root(`<A>1</A><Item>green</Item>`), xsd.ErrValue, "Item", "not one of red, blue"},
		{"enumeration keeps string whitespace", root(`<A>1</A><Item> red</Item>`), xsd.ErrValue, "Item", "not one of"},
		{"pattern", root(`<B><Code>A1</Code></B>`), xsd.ErrValue, "Code", "pattern"},
		{"bad boolean", root(`<A>1</A><Flag>yes</Flag>`), xsd.ErrValue, "Flag", "boolean"},
		{"too long", root(`<Name>abcd</Name><A>1</A>`), xsd.ErrRange, "Name", "maximum is 3"},
		{"too short", root(`<Name></Name><A>1</A>`), xsd.ErrRange, "Name", "minimum is 1"},
		{"below minimum", root(`<B><Size>0</Size></B>`), xsd.ErrRange, "Size", "below the minimum 1"},
		{"above maximum", root(`<B><Size>11</Size></B>`), xsd.ErrRange, "Size", "above the maximum 10"},
		{"bad dateTime", root(`<A>1</A><When>2023-02-29T00:00:00Z</When>`), xsd.ErrValue, "When", "day out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := validate(s, tt.doc)
			var xe *xsd.Error
			require.ErrorAs(t, err, &xe)
			assert.Equal(t, tt.kind, xe.Kind, xe.Error())
			assert.Equal(t, tt.element, xe.Element, xe.Error())
			assert.Contains(t, xe.Message, tt.message)
		})
	}
}

func TestValidate_CapsTheDepth(t *testing.T) {
	s := mustParse(t)
	_, err := s.Validate(xml.NewDecoder(strings.NewReader(root(`<B><Size>1</Size></B>`))), xsd.Options{MaxDepth: 2})
	var xe *xsd.Error
	require.ErrorAs(t, err, &xe)
	assert.Equal(t, xsd.ErrSyntax, xe.Kind)
	assert.Contains(t, xe.Message, "deeper than 2")
}

func TestValidate_RefusesAnElementOverItsMaxOccursBeforeReadingIt(t *testing.T) {
	s := mustParse(t)
	// The fourth Item is refused as it starts: what follows it, broken XML,
	// is never read.
	doc := `<Root xmlns="urn:test"><A>1</A><Item>red</Item><Item>red</Item><Item>red</Item><Item>` + strings.Repeat("<<<", 100)
	_, err := validate(s, doc)
	var xe *xsd.Error
	require.ErrorAs(t, err, &xe)
	assert.Equal(t, xsd.ErrStructure, xe.Kind)
	assert.Contains(t, xe.Message, "more than 3 Item elements")
}

func TestValidate_CapsTheElementCount(t *testing.T) {
	s := mustParse(t)
	doc := root(`<A>1</A><Item>red</Item><Item>red</Item>`) // Root, A and two Items
	_, err := s.Validate(xml.NewDecoder(strings.NewReader(doc)), xsd.Options{MaxElements: 4})
	require.NoError(t, err)
	_, err = s.Validate(xml.NewDecoder(strings.NewReader(doc)), xsd.Options{MaxElements: 3})
	var xe *xsd.Error
	require.ErrorAs(t, err, &xe)
	assert.Equal(t, xsd.ErrStructure, xe.Kind)
	assert.Contains(t, xe.Message, "more than 3 elements")
	assert.Equal(t, 3, s.Elements[0].Complex.MostOccurs("Item"))
}

func TestValidate_KeepsTheDecoderErrorForSyntax(t *testing.T) {
	s := mustParse(t)
	_, err := validate(s, `<Root xmlns="urn:test"><A>1</B></Root>`)
	var syntax *xml.SyntaxError
	assert.True(t, errors.As(err, &syntax))
}

func TestSimpleTypeCheck_DateTimeLexicalSpace(t *testing.T) {
	st := &xsd.SimpleType{Base: xsd.DateTime, MinLength: -1, MaxLength: -1}
	valid := []string{
		"2024-01-01T00:00:00Z", "2024-01-01T00:00:00", "2024-12-31T23:59:59.999+14:00",
		"2024-02-29T12:00:00-05:30", "12024-01-01T00:00:00Z", "-0044-03-15T00:00:00Z",
		"2024-01-01T24:00:00Z", " 2024-01-01T00:00:00Z\n", "2000-02-29T00:00:00Z",
	}
	for _, v := range valid {
		_, kind, msg := st.Check(v)
		assert.Zero(t, kind, "%q: %s", v, msg)
	}
	invalid := []string{
		"2024-1-01T00:00:00Z", "24-01-01T00:00:00Z", "0000-01-01T00:00:00Z", "02024-01-01T00:00:00Z",
		"2024-13-01T00:00:00Z", "2024-00-01T00:00:00Z", "2023-02-29T00:00:00Z", "1900-02-29T00:00:00Z",
		"2024-04-31T00:00:00Z", "2024-01-01T24:00:01Z", "2024-01-01T23:60:00Z", "2024-01-01T23:00:60Z",
		"2024-01-01T00:00:00.Z", "2024-01-01T00:00:00+15:00", "2024-01-01T00:00:00+14:30",
		"2024-01-01T00:00:00+0100", "2024-01-01 00:00:00Z", "2024-01-01", "", "2024-01-01T00:00:00z",
	}
	for _, v := range invalid {
		_, kind, _ := st.Check(v)
		assert.Equal(t, xsd.ErrValue, kind, "%q", v)
	}
}

func TestSimpleTypeCheck_CountsCharactersNotBytes(t *testing.T) {
	st := &xsd.SimpleType{Base: xsd.String, MinLength: -1, MaxLength: 2}
	value, kind, _ := st.Check("éé")
	assert.Zero(t, kind)
	assert.Equal(t, "éé", value)
	_, kind, _ = st.Check("ééé")
	assert.Equal(t, xsd.ErrRange, kind)
}

func TestBuiltin_String(t *testing.T) {
	assert.Equal(t, "xs:dateTime", xsd.DateTime.String())
	assert.Equal(t, "structure", xsd.ErrStructure.String())
}

func TestDocumentValue_IsTheGenericShapeOfTheDocument(t *testing.T) {
	s := mustParse(t)
	doc, err := validate(s, root(`<Name>ab</Name><B><Size>7</Size></B><Item>red</Item><When> 2024-01-01T00:00:00Z </When><Flag>0</Flag>`))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{
		"Name": "ab",
		"B":    map[string]any{"Size": int64(7)},
		"Item": []any{"red"},
		"When": "2024-01-01T00:00:00Z",
		"Flag": false,
	}, doc.Value())
	root := s.ComplexTypes[0]
	assert.True(t, root.Repeated("Item"))
	assert.False(t, root.Repeated("Name"))
}

// allSchema has an xs:all content model: Root's children in any order.
const allSchema = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:t="urn:test"
           targetNamespace="urn:test" elementFormDefault="qualified">
  <xs:element name="Root" type="t:Root"/>
  <xs:complexType name="Root">
    <xs:all>
      <xs:element name="Name" type="xs:string" minOccurs="0"/>
      <xs:element name="Size" type="xs:int"/>
      <xs:element name="Child" type="t:Child" minOccurs="0"/>
    </xs:all>
  </xs:complexType>
  <xs:complexType name="Child">
    <xs:all minOccurs="0">
      <xs:element name="A" type="xs:int"/>
      <xs:element name="B" type="xs:int"/>
    </xs:all>
  </xs:complexType>
</xs:schema>`

func TestParse_ReadsXsAll(t *testing.T) {
	s, err := xsd.Parse([]byte(allSchema))
	require.NoError(t, err)
	content := s.ComplexTypes[0].Content
	assert.Equal(t, xsd.AllParticle, content.Kind)
	assert.Equal(t, 1, content.Min)
	require.Len(t, content.Particles, 3)
	assert.Equal(t, 0, content.Particles[0].Min)
	assert.Equal(t, 1, content.Particles[1].Min)
	assert.Equal(t, 0, s.ComplexTypes[1].Content.Min)
	assert.False(t, s.ComplexTypes[0].Repeated("Size"))
}

func TestValidate_XsAllTakesChildrenInAnyOrder(t *testing.T) {
	s, err := xsd.Parse([]byte(allSchema))
	require.NoError(t, err)
	valid := map[string]string{
		"declared order":       root(`<Name>n</Name><Size>1</Size><Child><A>1</A><B>2</B></Child>`),
		"reversed":             root(`<Child><B>2</B><A>1</A></Child><Size>1</Size><Name>n</Name>`),
		"required only":        root(`<Size>1</Size>`),
		"optional group empty": root(`<Child/><Size>1</Size>`),
	}
	for name, doc := range valid {
		t.Run(name, func(t *testing.T) {
			d, err := validate(s, doc)
			require.NoError(t, err)
			assert.Equal(t, int64(1), d.Value()["Size"])
		})
	}
}

func TestValidate_XsAllRefusesDuplicatesAndMissingChildren(t *testing.T) {
	s, err := xsd.Parse([]byte(allSchema))
	require.NoError(t, err)
	tests := []struct {
		name, doc, element, message string
	}{
		{"duplicate", root(`<Size>1</Size><Name>a</Name><Size>2</Size>`), "Root", "Size occurs more than once"},
		{"duplicate optional", root(`<Name>a</Name><Size>1</Size><Name>b</Name>`), "Root", "Name occurs more than once"},
		{"missing required", root(`<Name>a</Name>`), "Root", "Root is incomplete: expected Size"},
		{"empty", root(``), "Root", "Root is incomplete: expected Size"},
		{"optional group partly there", root(`<Size>1</Size><Child><B>2</B></Child>`), "Child", "Child is incomplete: expected A"},
		{"unknown child", root(`<Size>1</Size><Other/>`), "Other", "Other is not allowed in Root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := validate(s, tt.doc)
			var xe *xsd.Error
			require.ErrorAs(t, err, &xe)
			assert.Equal(t, xsd.ErrStructure, xe.Kind, xe.Error())
			assert.Equal(t, tt.element, xe.Element, xe.Error())
			assert.Contains(t, xe.Message, tt.message)
		})
	}
}

func TestValidate_NamespacesAreReadAsTheTargetNamespace(t *testing.T) {
	s := mustParse(t)
	opts := xsd.Options{Namespaces: []string{"urn:alias", ""}}
	check := func(doc string) (*xsd.Document, error) {
		return s.Validate(xml.NewDecoder(strings.NewReader(doc)), opts)
	}
	for name, doc := range map[string]string{
		"target":       `<Root xmlns="urn:test"><A>1</A></Root>`,
		"alias":        `<Root xmlns="urn:alias"><A>1</A></Root>`,
		"alias prefix": `<a:Root xmlns:a="urn:alias"><a:A>1</a:A></a:Root>`,
		"none":         `<Root><A>1</A></Root>`,
	} {
		t.Run(name, func(t *testing.T) {
			d, err := check(doc)
			require.NoError(t, err)
			var v struct {
				XMLName xml.Name `xml:"urn:test Root"`
				A       int      `xml:"urn:test A"`
			}
			require.NoError(t, d.Decode(&v), "the document holds the target namespace")
			assert.Equal(t, 1, v.A)
		})
	}
	for name, doc := range map[string]string{
		"alias root, target child":       `<Root xmlns="urn:alias"><A xmlns="urn:test">1</A></Root>`,
		"no namespace root, alias child": `<Root><A xmlns="urn:alias">1</A></Root>`,
		"target root, unqualified child": `<t:Root xmlns:t="urn:test"><A>1</A></t:Root>`,
		"another namespace":              `<Root xmlns="urn:other"><A>1</A></Root>`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := check(doc)
			var xe *xsd.Error
			require.ErrorAs(t, err, &xe)
			assert.Equal(t, xsd.ErrStructure, xe.Kind)
		})
	}
	_, err := validate(s, `<Root><A>1</A></Root>`)
	assert.Error(t, err, "without Options.Namespaces only the target namespace is read")
}
