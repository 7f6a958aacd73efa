package restaurant

// kind is one resource type of the configuration: its list path (which is
// also its key in an import document and its name in the store), the
// entityType its entities and references carry, the spec schema an entity
// must satisfy and the references it holds to other kinds.
type kind struct {
	Path       string
	EntityType string
	Schema     string
	Refs       []refField
	// Single marks a kind a restaurant has at most one of (tip withholding):
	// its import key holds one object, not an array.
	Single bool
}

// refField is a field of an entity that refers to entities of another kind.
type refField struct {
	Field  string
	Target string
	// Many marks an array of references; otherwise the field is one
	// reference (null allowed where the schema allows it).
	Many bool
}

// kinds lists every resource type in the order of the spec.
var kinds = []*kind{
	{Path: "alternatePaymentTypes", EntityType: "AlternatePaymentType", Schema: "AlternatePaymentType"},
	{Path: "breakTypes", EntityType: "BreakType", Schema: "BreakType"},
	{Path: "cashDrawers", EntityType: "CashDrawer", Schema: "CashDrawer",
		Refs: []refField{{Field: "printer", Target: "printers"}}},
	{Path: "diningOptions", EntityType: "DiningOption", Schema: "DiningOption"},
	{Path: "discounts", EntityType: "Discount", Schema: "Discount"},
	{Path: "menuGroups", EntityType: "MenuGroup", Schema: "MenuGroup", Refs: []refField{
		{Field: "menu", Target: "menus"},
		{Field: "parent", Target: "menuGroups"},
		{Field: "items", Target: "menuItems", Many: true},
		{Field: "subgroups", Target: "menuGroups", Many: true},
		{Field: "optionGroups", Target: "menuOptionGroups", Many: true},
	}},
	{Path: "menuItems", EntityType: "MenuItem", Schema: "MenuItem",
		Refs: []refField{{Field: "optionGroups", Target: "menuOptionGroups", Many: true}}},
	{Path: "menuOptionGroups", EntityType: "MenuOptionGroup", Schema: "MenuOptionGroup",
		Refs: []refField{{Field: "options", Target: "menuItems", Many: true}}},
	{Path: "menus", EntityType: "Menu", Schema: "Menu",
		Refs: []refField{{Field: "groups", Target: "menuGroups", Many: true}}},
	{Path: "noSaleReasons", EntityType: "NoSaleReason", Schema: "NoSaleReason"},
	{Path: "payoutReasons", EntityType: "PayoutReason", Schema: "PayoutReason"},
	{Path: "preModifiers", EntityType: "PreModifier", Schema: "PreModifier",
		Refs: []refField{{Field: "parent", Target: "preModifierGroups"}}},
	{Path: "preModifierGroups", EntityType: "PreModifierGroup", Schema: "PreModifierGroup"},
	{Path: "priceGroups", EntityType: "PriceGroup", Schema: "PriceGroup"},
	{Path: "printers", EntityType: "Printer", Schema: "Printer"},
	{Path: "restaurantServices", EntityType: "RestaurantService", Schema: "RestaurantService"},
	{Path: "revenueCenters", EntityType: "RevenueCenter", Schema: "RevenueCenter"},
	{Path: "salesCategories", EntityType: "SalesCategory", Schema: "SalesCategory"},
	{Path: "serviceAreas", EntityType: "ServiceArea", Schema: "ServiceArea",
		Refs: []refField{{Field: "revenueCenter", Target: "revenueCenters"}}},
	{Path: "serviceCharges", EntityType: "ServiceCharge", Schema: "ServiceCharge",
		Refs: []refField{{Field: "applicableTaxes", Target: "taxRates", Many: true}}},
	{Path: "tables", EntityType: "Table", Schema: "Table", Refs: []refField{
		{Field: "serviceArea", Target: "serviceAreas"},
		{Field: "revenueCenter", Target: "revenueCenters"},
	}},
	{Path: "taxRates", EntityType: "TaxRate", Schema: "TaxRate"},
	{Path: "voidReasons", EntityType: "VoidReason", Schema: "VoidReason"},
	{Path: "tipWithholding", EntityType: "TipWithholding", Schema: "TipWithholding", Single: true},
}

var kindByPath = func() map[string]*kind {
	m := make(map[string]*kind, len(kinds))
	for _, k := range kinds {
		m[k.Path] = k
	}
	return m
}()

// Resources returns the names of every resource type, as they appear in list
// paths, import documents and the admin API's archive and remove calls.
func Resources() []string {
	out := make([]string, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k.Path)
	}
	return out
}
