package restaurant

// The resources of the configuration API, as Changes reports them; each has
// its List and Get methods on Client.
var (
	// AlternatePaymentTypes are the restaurant's alternate payment types.
	AlternatePaymentTypes = Resource[AlternatePaymentType]{path: "alternatePaymentTypes", guid: func(v *AlternatePaymentType) string { return v.GUID }}
	// BreakTypes are the restaurant's break types.
	BreakTypes = Resource[BreakType]{path: "breakTypes", guid: func(v *BreakType) string { return v.GUID }}
	// CashDrawers are the restaurant's cash drawers.
	CashDrawers = Resource[CashDrawer]{path: "cashDrawers", guid: func(v *CashDrawer) string { return v.GUID }}
	// DiningOptions are the restaurant's dining options.
	DiningOptions = Resource[DiningOption]{path: "diningOptions", guid: func(v *DiningOption) string { return v.GUID }}
	// Discounts are the restaurant's discounts.
	Discounts = Resource[Discount]{path: "discounts", guid: func(v *Discount) string { return v.GUID }}
	// MenuGroups are the restaurant's menu groups.
	MenuGroups = Resource[MenuGroup]{path: "menuGroups", guid: func(v *MenuGroup) string { return v.GUID }}
	// MenuItems are the restaurant's menu items and modifiers.
	MenuItems = Resource[MenuItem]{path: "menuItems", guid: func(v *MenuItem) string { return v.GUID }}
	// MenuOptionGroups are the restaurant's modifier groups.
	MenuOptionGroups = Resource[MenuOptionGroup]{path: "menuOptionGroups", guid: func(v *MenuOptionGroup) string { return v.GUID }}
	// Menus are the restaurant's menus.
	Menus = Resource[Menu]{path: "menus", guid: func(v *Menu) string { return v.GUID }}
	// NoSaleReasons are the restaurant's no-sale reasons.
	NoSaleReasons = Resource[NoSaleReason]{path: "noSaleReasons", guid: func(v *NoSaleReason) string { return v.GUID }}
	// PayoutReasons are the restaurant's payout reasons.
	PayoutReasons = Resource[PayoutReason]{path: "payoutReasons", guid: func(v *PayoutReason) string { return v.GUID }}
	// PreModifiers are the restaurant's pre-modifiers.
	PreModifiers = Resource[PreModifier]{path: "preModifiers", guid: func(v *PreModifier) string { return v.GUID }}
	// PreModifierGroups are the restaurant's pre-modifier groups.
	PreModifierGroups = Resource[PreModifierGroup]{path: "preModifierGroups", guid: func(v *PreModifierGroup) string { return v.GUID }}
	// PriceGroups are the restaurant's price groups.
	PriceGroups = Resource[PriceGroup]{path: "priceGroups", guid: func(v *PriceGroup) string { return v.GUID }}
	// Printers are the restaurant's printers.
	Printers = Resource[Printer]{path: "printers", guid: func(v *Printer) string { return v.GUID }}
	// RestaurantServices are the restaurant's restaurant services.
	RestaurantServices = Resource[RestaurantService]{path: "restaurantServices", guid: func(v *RestaurantService) string { return v.GUID }}
	// RevenueCenters are the restaurant's revenue centers.
	RevenueCenters = Resource[RevenueCenter]{path: "revenueCenters", guid: func(v *RevenueCenter) string { return v.GUID }}
	// SalesCategories are the restaurant's sales categories.
	SalesCategories = Resource[SalesCategory]{path: "salesCategories", guid: func(v *SalesCategory) string { return v.GUID }}
	// ServiceAreas are the restaurant's service areas.
	ServiceAreas = Resource[ServiceArea]{path: "serviceAreas", guid: func(v *ServiceArea) string { return v.GUID }}
	// ServiceCharges are the restaurant's service charges.
	ServiceCharges = Resource[ServiceCharge]{path: "serviceCharges", guid: func(v *ServiceCharge) string { return v.GUID }}
	// Tables are the restaurant's tables.
	Tables = Resource[Table]{path: "tables", guid: func(v *Table) string { return v.GUID }}
	// TaxRates are the restaurant's tax rates.
	TaxRates = Resource[TaxRate]{path: "taxRates", guid: func(v *TaxRate) string { return v.GUID }}
	// VoidReasons are the restaurant's void reasons.
	VoidReasons = Resource[VoidReason]{path: "voidReasons", guid: func(v *VoidReason) string { return v.GUID }}
)

// all lists every resource, for Changes.
var all = []changeLister{
	AlternatePaymentTypes,
	BreakTypes,
	CashDrawers,
	DiningOptions,
	Discounts,
	MenuGroups,
	MenuItems,
	MenuOptionGroups,
	Menus,
	NoSaleReasons,
	PayoutReasons,
	PreModifiers,
	PreModifierGroups,
	PriceGroups,
	Printers,
	RestaurantServices,
	RevenueCenters,
	SalesCategories,
	ServiceAreas,
	ServiceCharges,
	Tables,
	TaxRates,
	VoidReasons,
}
