package restaurant

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/restaurantapi"
)

// jsonShape describes how t encodes, recursively: each JSON property's name
// and shape, "null|" in front of a property that may be null. A pointer
// property tagged omitempty (absent, never null, such as externalId) has the
// shape of what it points to, since the client's own types hold it as a
// plain value whose zero value is omitted alike.
func jsonShape(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return "null|" + jsonShape(t.Elem())
	case reflect.Slice:
		return "[" + jsonShape(t.Elem()) + "]"
	case reflect.Struct:
		var b strings.Builder
		b.WriteString("{")
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			ft := f.Type
			if opts == "omitempty" && ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			fmt.Fprintf(&b, "%s:%s;", name, jsonShape(ft))
		}
		b.WriteString("}")
		return sortProps(b.String())
	default:
		return t.Kind().String()
	}
}

// sortProps orders the top-level properties of a struct shape by name, so
// field order does not matter.
func sortProps(s string) string {
	inner := s[1 : len(s)-1]
	var props []string
	depth, start := 0, 0
	for i, r := range inner {
		switch r {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case ';':
			if depth == 0 {
				props = append(props, inner[start:i])
				start = i + 1
			}
		}
	}
	slices.Sort(props)
	return "{" + strings.Join(props, ";") + "}"
}

// Every type the client returns has every property of its schema in the
// spec, with the same shape, nullability included: the generated model (from
// the spec) and the client's own type encode alike.
func TestOwnTypes_MatchTheSpec(t *testing.T) {
	pairs := []struct{ own, gen any }{
		{AlternatePaymentType{}, restaurantapi.AlternatePaymentType{}},
		{BreakType{}, restaurantapi.BreakType{}},
		{CashDrawer{}, restaurantapi.CashDrawer{}},
		{DiningOption{}, restaurantapi.DiningOption{}},
		{Discount{}, restaurantapi.Discount{}},
		{Menu{}, restaurantapi.Menu{}},
		{MenuGroup{}, restaurantapi.MenuGroup{}},
		{MenuItem{}, restaurantapi.MenuItem{}},
		{MenuOptionGroup{}, restaurantapi.MenuOptionGroup{}},
		{NoSaleReason{}, restaurantapi.NoSaleReason{}},
		{PayoutReason{}, restaurantapi.PayoutReason{}},
		{PreModifier{}, restaurantapi.PreModifier{}},
		{PreModifierGroup{}, restaurantapi.PreModifierGroup{}},
		{PriceGroup{}, restaurantapi.PriceGroup{}},
		{Printer{}, restaurantapi.Printer{}},
		{RestaurantService{}, restaurantapi.RestaurantService{}},
		{RevenueCenter{}, restaurantapi.RevenueCenter{}},
		{SalesCategory{}, restaurantapi.SalesCategory{}},
		{ServiceArea{}, restaurantapi.ServiceArea{}},
		{ServiceCharge{}, restaurantapi.ServiceCharge{}},
		{Table{}, restaurantapi.Table{}},
		{TaxRate{}, restaurantapi.TaxRate{}},
		{TipWithholding{}, restaurantapi.TipWithholding{}},
		{VoidReason{}, restaurantapi.VoidReason{}},
	}
	for _, p := range pairs {
		own, gen := reflect.TypeOf(p.own), reflect.TypeOf(p.gen)
		t.Run(own.Name(), func(t *testing.T) {
			assert.Equal(t, gen.Name(), own.Name())
			assert.Equal(t, jsonShape(gen), jsonShape(own))
		})
	}
	// Every resource's List and Get return the own type of its schema.
	for _, r := range all {
		typ := reflect.TypeOf(r).Field(1).Type.In(0).Elem() // guid func(*T) string
		assert.Equal(t, "github.com/apistack/apistack/clients/restaurant", typ.PkgPath(), "%s", typ)
	}
}

// An answer decodes into the own type with every value in its Go-named
// field, and encodes back to the same JSON.
func TestOwnTypes_DecodeTheWireNames(t *testing.T) {
	const wire = `{"guid":"4a5ef2a1-3c1f-4f56-9a3a-1b0e2f3c4d5e","entityType":"MenuItem","externalId":"pos:1234",
	"name":"Fries","calories":null,"images":[{"url":"https://img.example/fries.png"}],"inheritOptionGroups":true,
	"inheritUnitOfMeasure":false,"optionGroups":[{"guid":"5b6ef2a1-3c1f-4f56-9a3a-1b0e2f3c4d5e","entityType":"MenuOptionGroup"}],
	"orderableOnline":"YES","plu":"0042","sku":"FR-1","type":"NONE","unitOfMeasure":"NONE","visibility":"POS_ONLY"}`
	var item MenuItem
	require.NoError(t, json.Unmarshal([]byte(wire), &item))
	assert.Equal(t, MenuItem{
		GUID: "4a5ef2a1-3c1f-4f56-9a3a-1b0e2f3c4d5e", EntityType: "MenuItem", ExternalID: "pos:1234", Name: "Fries",
		Images: []Image{{URL: "https://img.example/fries.png"}}, InheritOptionGroups: true,
		OptionGroups:    []ExternalReference{{GUID: "5b6ef2a1-3c1f-4f56-9a3a-1b0e2f3c4d5e", EntityType: "MenuOptionGroup"}},
		OrderableOnline: OrderableOnlineYes, PLU: "0042", SKU: "FR-1", Type: MenuItemTypeNone,
		UnitOfMeasure: UnitOfMeasureNone, Visibility: VisibilityPOSOnly,
	}, item)
	back, err := json.Marshal(item)
	require.NoError(t, err)
	assert.JSONEq(t, wire, string(back))
}

// The error keys are the spec's messageKey values.
func TestErrorKeys_AreTheSpecs(t *testing.T) {
	for own, gen := range map[ErrorKey]restaurantapi.ErrorKey{
		InvalidRequest: restaurantapi.ErrorKeyINVALIDREQUEST, InvalidPageToken: restaurantapi.ErrorKeyINVALIDPAGETOKEN,
		InvalidLastModified: restaurantapi.ErrorKeyINVALIDLASTMODIFIED, MissingRestaurantExternalID: restaurantapi.ErrorKeyMISSINGRESTAURANTEXTERNALID,
		InvalidRestaurantExternalID: restaurantapi.ErrorKeyINVALIDRESTAURANTEXTERNALID, UnknownRestaurant: restaurantapi.ErrorKeyUNKNOWNRESTAURANT,
		RestaurantNotGranted: restaurantapi.ErrorKeyRESTAURANTNOTGRANTED, InvalidToken: restaurantapi.ErrorKeyINVALIDTOKEN,
		TokenExpired: restaurantapi.ErrorKeyTOKENEXPIRED, InvalidCredentials: restaurantapi.ErrorKeyINVALIDCREDENTIALS,
		NotFound: restaurantapi.ErrorKeyNOTFOUND, RateLimited: restaurantapi.ErrorKeyRATELIMITED, InternalError: restaurantapi.ErrorKeyINTERNALERROR,
	} {
		assert.Equal(t, string(gen), string(own))
		assert.True(t, gen.Valid(), "%s", gen)
	}
}
