package storage

import (
	"testing"

	"github.com/apistack/apistack/clients/internal/shapetest"
)

// Every schema of the spec the client exposes is a type of the package with
// every element as a field of a compatible type (under the element's name,
// or the plural of a repeated one), and every enumeration value is a
// constant; the other schemas say why the client has no type.
func TestOwnTypes_MatchTheSpec(t *testing.T) {
	shapetest.Check{
		Spec: shapetest.Load(t, "storage/openapi.yaml"),
		Types: []shapetest.Type{
			{Schema: "LifecycleConfiguration", Go: LifecycleConfiguration{}, Fields: map[string]string{"Rule": "Rules"}},
			{Schema: "LifecycleRule", Go: Rule{}},
			{Schema: "LifecycleRuleFilter", Go: Filter{}},
			{Schema: "LifecycleRuleAndOperator", Go: And{}, Fields: map[string]string{"Tag": "Tags"}},
			{Schema: "Tag", Go: Tag{}},
			{Schema: "LifecycleExpiration", Go: Expiration{}},
			{Schema: "NoncurrentVersionExpiration", Go: NoncurrentVersionExpiration{}},
			{Schema: "AbortIncompleteMultipartUpload", Go: AbortIncompleteMultipartUpload{}},
			{Schema: "Transition", Go: Transition{}},
			{Schema: "NoncurrentVersionTransition", Go: NoncurrentVersionTransition{}},
			{Schema: "StorageClass", Go: StorageClass("")},
			{Schema: "ErrorCode", Go: ErrorCode("")},
			{Schema: "Error", Go: Error{}, Extra: map[string]string{"StatusCode": "the answer's HTTP status, which the document does not repeat"}},
		},
		Instants: map[string]string{"Date": "an xs:dateTime, which the XML document writes without an OpenAPI format"},
	}.Run(t)
}
