package restaurant

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients/internal/shapetest"
	"github.com/apistack/apistack/gen/restaurantapi"
)

// Every schema of the spec the client exposes is a type of the package with
// every property as a field of a compatible type (nullable ones able to hold
// null), and every enumeration value is a constant; the other schemas say
// why the client has no type.
func TestOwnTypes_MatchTheSpec(t *testing.T) {
	shapetest.Check{
		Spec: shapetest.Load(t, "restaurant/openapi.yaml"),
		Types: []shapetest.Type{
			{Schema: "AlternatePaymentType", Go: AlternatePaymentType{}},
			{Schema: "BreakType", Go: BreakType{}},
			{Schema: "CashDrawer", Go: CashDrawer{}},
			{Schema: "DiningOption", Go: DiningOption{}},
			{Schema: "Discount", Go: Discount{}},
			{Schema: "Menu", Go: Menu{}},
			{Schema: "MenuGroup", Go: MenuGroup{}},
			{Schema: "MenuItem", Go: MenuItem{}},
			{Schema: "MenuOptionGroup", Go: MenuOptionGroup{}},
			{Schema: "NoSaleReason", Go: NoSaleReason{}},
			{Schema: "PayoutReason", Go: PayoutReason{}},
			{Schema: "PreModifier", Go: PreModifier{}},
			{Schema: "PreModifierGroup", Go: PreModifierGroup{}},
			{Schema: "PriceGroup", Go: PriceGroup{}},
			{Schema: "Printer", Go: Printer{}},
			{Schema: "RestaurantService", Go: RestaurantService{}},
			{Schema: "RevenueCenter", Go: RevenueCenter{}},
			{Schema: "SalesCategory", Go: SalesCategory{}},
			{Schema: "ServiceArea", Go: ServiceArea{}},
			{Schema: "ServiceCharge", Go: ServiceCharge{}},
			{Schema: "Table", Go: Table{}},
			{Schema: "TaxRate", Go: TaxRate{}},
			{Schema: "TipWithholding", Go: TipWithholding{}},
			{Schema: "VoidReason", Go: VoidReason{}},
			{Schema: "Reference", Go: Reference{}},
			{Schema: "ExternalReference", Go: ExternalReference{}},
			{Schema: "Image", Go: Image{}},
			{Schema: "ConditionalTaxRate", Go: ConditionalTaxRate{}},
			{Schema: "TaxTableRow", Go: TaxTableRow{}},
			{Schema: "ServiceChargeCriteria", Go: ServiceChargeCriteria{}},
			{Schema: "ErrorKey", Go: ErrorKey("")},
			{Schema: "UnitOfMeasure", Go: UnitOfMeasure("")},
			{Schema: "OrderableOnline", Go: OrderableOnline("")},
			{Schema: "Visibility", Go: Visibility("")},
			{Schema: "DiscountItemPickingPriority", Go: ItemPickingPriority("")},
			{Schema: "ServiceChargeServiceChargeCalculation", Go: ServiceChargeCalculation("")},
			{Schema: "TaxRateRoundingType", Go: TaxRoundingType("")},
			{Schema: "Error", Go: Error{}, Fields: map[string]string{"status": "StatusCode", "messageKey": "Key", "requestId": "RequestID", "errors": "Details"},
				Extra: map[string]string{"RetryAfter": "the wait a 429 asked for, from its header"}},
			{Schema: "ErrorDetail", Go: ErrorDetail{}},
		},
		NullAsZero: map[string]string{
			"externalId": `"" is an entity without one; omitted when empty, as the server omits a null one`,
			"fieldName":  `"" is an error that names no field`,
		},
		Skip: map[string]string{
			"AuthenticationRequest":  "the client authenticates with Config's credentials itself",
			"AuthenticationResponse": "the client keeps its token to itself and renews it",
			"AuthenticationToken":    "the client keeps its token to itself and renews it",
			"Named":                  "a part of the schemas that extend it, whose types carry its name",
		},
	}.Run(t)
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
