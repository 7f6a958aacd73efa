package restaurant

//go:generate go run ./internal/kindgen -in kinds.go -out handlers_gen.go

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
	Target resource
	// Many marks an array of references; otherwise the field is one
	// reference (null allowed where the schema allows it).
	Many bool
}

// resource names one resource type. It is not a string, so a resource named
// in code is one of the constants below and a misspelt one does not compile;
// its Path is the string the spec, the store and import documents use.
type resource int

// The resource types, in the order of the spec (tipWithholding, which a
// restaurant has one of, last). Each is a row of kinds; the list and get
// handlers are generated from that table (handlers_gen.go).
const (
	resAlternatePaymentTypes resource = iota
	resBreakTypes
	resCashDrawers
	resDiningOptions
	resDiscounts
	resMenuGroups
	resMenuItems
	resMenuOptionGroups
	resMenus
	resNoSaleReasons
	resPayoutReasons
	resPreModifiers
	resPreModifierGroups
	resPriceGroups
	resPrinters
	resRestaurantServices
	resRevenueCenters
	resSalesCategories
	resServiceAreas
	resServiceCharges
	resTables
	resTaxRates
	resVoidReasons
	resTipWithholding
)

// kinds lists every resource type, indexed by its constant: the generator
// of handlers_gen.go reads this table.
var kinds = [...]kind{
	resAlternatePaymentTypes: {Path: "alternatePaymentTypes", EntityType: "AlternatePaymentType", Schema: "AlternatePaymentType"},
	resBreakTypes:            {Path: "breakTypes", EntityType: "BreakType", Schema: "BreakType"},
	resCashDrawers: {Path: "cashDrawers", EntityType: "CashDrawer", Schema: "CashDrawer",
		Refs: []refField{{Field: "printer", Target: resPrinters}}},
	resDiningOptions: {Path: "diningOptions", EntityType: "DiningOption", Schema: "DiningOption"},
	resDiscounts:     {Path: "discounts", EntityType: "Discount", Schema: "Discount"},
	resMenuGroups: {Path: "menuGroups", EntityType: "MenuGroup", Schema: "MenuGroup", Refs: []refField{
		{Field: "menu", Target: resMenus},
		{Field: "parent", Target: resMenuGroups},
		{Field: "items", Target: resMenuItems, Many: true},
		{Field: "subgroups", Target: resMenuGroups, Many: true},
		{Field: "optionGroups", Target: resMenuOptionGroups, Many: true},
	}},
	resMenuItems: {Path: "menuItems", EntityType: "MenuItem", Schema: "MenuItem",
		Refs: []refField{{Field: "optionGroups", Target: resMenuOptionGroups, Many: true}}},
	resMenuOptionGroups: {Path: "menuOptionGroups", EntityType: "MenuOptionGroup", Schema: "MenuOptionGroup",
		Refs: []refField{{Field: "options", Target: resMenuItems, Many: true}}},
	resMenus: {Path: "menus", EntityType: "Menu", Schema: "Menu",
		Refs: []refField{{Field: "groups", Target: resMenuGroups, Many: true}}},
	resNoSaleReasons: {Path: "noSaleReasons", EntityType: "NoSaleReason", Schema: "NoSaleReason"},
	resPayoutReasons: {Path: "payoutReasons", EntityType: "PayoutReason", Schema: "PayoutReason"},
	resPreModifiers: {Path: "preModifiers", EntityType: "PreModifier", Schema: "PreModifier",
		Refs: []refField{{Field: "parent", Target: resPreModifierGroups}}},
	resPreModifierGroups:  {Path: "preModifierGroups", EntityType: "PreModifierGroup", Schema: "PreModifierGroup"},
	resPriceGroups:        {Path: "priceGroups", EntityType: "PriceGroup", Schema: "PriceGroup"},
	resPrinters:           {Path: "printers", EntityType: "Printer", Schema: "Printer"},
	resRestaurantServices: {Path: "restaurantServices", EntityType: "RestaurantService", Schema: "RestaurantService"},
	resRevenueCenters:     {Path: "revenueCenters", EntityType: "RevenueCenter", Schema: "RevenueCenter"},
	resSalesCategories:    {Path: "salesCategories", EntityType: "SalesCategory", Schema: "SalesCategory"},
	resServiceAreas: {Path: "serviceAreas", EntityType: "ServiceArea", Schema: "ServiceArea",
		Refs: []refField{{Field: "revenueCenter", Target: resRevenueCenters}}},
	resServiceCharges: {Path: "serviceCharges", EntityType: "ServiceCharge", Schema: "ServiceCharge",
		Refs: []refField{{Field: "applicableTaxes", Target: resTaxRates, Many: true}}},
	resTables: {Path: "tables", EntityType: "Table", Schema: "Table", Refs: []refField{
		{Field: "serviceArea", Target: resServiceAreas},
		{Field: "revenueCenter", Target: resRevenueCenters},
	}},
	resTaxRates:       {Path: "taxRates", EntityType: "TaxRate", Schema: "TaxRate"},
	resVoidReasons:    {Path: "voidReasons", EntityType: "VoidReason", Schema: "VoidReason"},
	resTipWithholding: {Path: "tipWithholding", EntityType: "TipWithholding", Schema: "TipWithholding", Single: true},
}

// resourceByPath finds a resource by the string callers name it with.
var resourceByPath = func() map[string]resource {
	m := make(map[string]resource, len(kinds))
	for r := range kinds {
		m[kinds[r].Path] = resource(r)
	}
	return m
}()

// kindByPath finds a row of kinds by its Path; nil when there is none.
var kindByPath = func() map[string]*kind {
	m := make(map[string]*kind, len(kinds))
	for r := range kinds {
		m[kinds[r].Path] = &kinds[r]
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
