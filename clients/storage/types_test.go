package storage

import (
	"encoding/xml"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/lifecycle"
)

// fieldNames lists t's fields, and its struct fields' fields, by name and
// kind, recursively ("Rules[].Filter*.Tag*.Key string"); XMLName is not a
// field of the document.
func fieldNames(t reflect.Type, prefix string, out *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Name == "XMLName" {
			continue
		}
		name, ft := prefix+f.Name, f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			if ft.Kind() == reflect.Pointer {
				name += "*"
			} else {
				name += "[]"
			}
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && ft != reflect.TypeOf(time.Time{}) {
			fieldNames(ft, name+".", out)
			continue
		}
		*out = append(*out, name+" "+ft.Kind().String())
	}
}

// The own types have every element of the schema, under the same names,
// optional where the schema makes it optional.
func TestOwnTypes_MirrorTheSchema(t *testing.T) {
	var own, gen []string
	fieldNames(reflect.TypeOf(LifecycleConfiguration{}), "", &own)
	fieldNames(reflect.TypeOf(lifecycle.LifecycleConfiguration{}), "", &gen)
	assert.Equal(t, gen, own)
}

// assertNoZeroField fails on any field of v, recursively, left at its zero
// value: a conversion that forgot a field leaves it so.
func assertNoZeroField(t *testing.T, v reflect.Value, path string) {
	t.Helper()
	switch v.Kind() {
	case reflect.Pointer:
		if assert.False(t, v.IsNil(), "%s is nil", path) {
			assertNoZeroField(t, v.Elem(), path)
		}
	case reflect.Slice:
		if assert.NotZero(t, v.Len(), "%s is empty", path) {
			for i := range v.Len() {
				assertNoZeroField(t, v.Index(i), path+"[]")
			}
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			assert.False(t, v.Interface().(time.Time).IsZero(), "%s is zero", path)
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).Name != "XMLName" {
				assertNoZeroField(t, v.Field(i), path+"."+v.Type().Field(i).Name)
			}
		}
	default:
		assert.False(t, v.IsZero(), "%s is zero", path)
	}
}

// A configuration with every element set converts to the generated type
// with every element set, goes through XML, and comes back equal.
func TestOwnTypes_ConvertEveryElementBothWays(t *testing.T) {
	ptr := func(s string) *string { return &s }
	n32 := func(n int32) *int32 { return &n }
	n64 := func(n int64) *int64 { return &n }
	day := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	yes := true
	full := &LifecycleConfiguration{Rules: []Rule{{
		ID: ptr("every-element"), Prefix: ptr("legacy/"), Status: RuleDisabled,
		Filter: &Filter{
			Prefix: ptr("logs/"), Tag: &Tag{Key: "k", Value: "v"}, ObjectSizeGreaterThan: n64(1), ObjectSizeLessThan: n64(2),
			And: &And{Prefix: ptr("a/"), Tags: []Tag{{Key: "a", Value: "b"}}, ObjectSizeGreaterThan: n64(3), ObjectSizeLessThan: n64(4)},
		},
		Transition:                     &Transition{Date: &day, Days: n32(5), StorageClass: StorageClassGlacierIR},
		Expiration:                     &Expiration{Date: &day, Days: n32(6), ExpiredObjectDeleteMarker: &yes},
		NoncurrentVersionTransition:    &NoncurrentVersionTransition{NoncurrentDays: 7, StorageClass: StorageClassOneZoneIA, NewerNoncurrentVersions: n32(8)},
		NoncurrentVersionExpiration:    &NoncurrentVersionExpiration{NoncurrentDays: 9, NewerNoncurrentVersions: n32(10)},
		AbortIncompleteMultipartUpload: &AbortIncompleteMultipartUpload{DaysAfterInitiation: 11},
	}}}
	assertNoZeroField(t, reflect.ValueOf(full), "own")
	wire := toWire(full)
	assertNoZeroField(t, reflect.ValueOf(wire), "wire")

	body, err := MarshalConfiguration(full)
	require.NoError(t, err)
	var decoded lifecycle.LifecycleConfiguration
	require.NoError(t, xml.Unmarshal(body, &decoded))
	assert.Equal(t, full, fromWire(&decoded))
}

// The constants are the schema's enumerations.
func TestOwnTypes_EnumerationsAreTheSchemas(t *testing.T) {
	for own, gen := range map[string]string{
		string(RuleEnabled): string(lifecycle.ExpirationStatusEnabled), string(RuleDisabled): string(lifecycle.ExpirationStatusDisabled),
		string(StorageClassGlacier): string(lifecycle.StorageClassGlacier), string(StorageClassStandardIA): string(lifecycle.StorageClassStandardIa),
		string(StorageClassOneZoneIA): string(lifecycle.StorageClassOnezoneIa), string(StorageClassIntelligentTiering): string(lifecycle.StorageClassIntelligentTiering),
		string(StorageClassDeepArchive): string(lifecycle.StorageClassDeepArchive), string(StorageClassGlacierIR): string(lifecycle.StorageClassGlacierIr),
	} {
		assert.Equal(t, gen, own)
	}
}
