package restaurant

import "github.com/apistack/apistack/gen/restaurantapi"

// The resources of the configuration API, as Changes reports them; each has
// its List and Get methods on Client.
var (
	// AlternatePaymentTypes are the restaurant's alternate payment types.
	AlternatePaymentTypes = Resource[restaurantapi.AlternatePaymentType]{path: "alternatePaymentTypes", guid: func(v *restaurantapi.AlternatePaymentType) string { return v.Guid }}
	// BreakTypes are the restaurant's break types.
	BreakTypes = Resource[restaurantapi.BreakType]{path: "breakTypes", guid: func(v *restaurantapi.BreakType) string { return v.Guid }}
	// CashDrawers are the restaurant's cash drawers.
	CashDrawers = Resource[restaurantapi.CashDrawer]{path: "cashDrawers", guid: func(v *restaurantapi.CashDrawer) string { return v.Guid }}
	// DiningOptions are the restaurant's dining options.
	DiningOptions = Resource[restaurantapi.DiningOption]{path: "diningOptions", guid: func(v *restaurantapi.DiningOption) string { return v.Guid }}
	// Discounts are the restaurant's discounts.
	Discounts = Resource[restaurantapi.Discount]{path: "discounts", guid: func(v *restaurantapi.Discount) string { return v.Guid }}
	// MenuGroups are the restaurant's menu groups.
	MenuGroups = Resource[restaurantapi.MenuGroup]{path: "menuGroups", guid: func(v *restaurantapi.MenuGroup) string { return v.Guid }}
	// MenuItems are the restaurant's menu items and modifiers.
	MenuItems = Resource[restaurantapi.MenuItem]{path: "menuItems", guid: func(v *restaurantapi.MenuItem) string { return v.Guid }}
	// MenuOptionGroups are the restaurant's modifier groups.
	MenuOptionGroups = Resource[restaurantapi.MenuOptionGroup]{path: "menuOptionGroups", guid: func(v *restaurantapi.MenuOptionGroup) string { return v.Guid }}
	// Menus are the restaurant's menus.
	Menus = Resource[restaurantapi.Menu]{path: "menus", guid: func(v *restaurantapi.Menu) string { return v.Guid }}
	// NoSaleReasons are the restaurant's no-sale reasons.
	NoSaleReasons = Resource[restaurantapi.NoSaleReason]{path: "noSaleReasons", guid: func(v *restaurantapi.NoSaleReason) string { return v.Guid }}
	// PayoutReasons are the restaurant's payout reasons.
	PayoutReasons = Resource[restaurantapi.PayoutReason]{path: "payoutReasons", guid: func(v *restaurantapi.PayoutReason) string { return v.Guid }}
	// PreModifiers are the restaurant's pre-modifiers.
	PreModifiers = Resource[restaurantapi.PreModifier]{path: "preModifiers", guid: func(v *restaurantapi.PreModifier) string { return v.Guid }}
	// PreModifierGroups are the restaurant's pre-modifier groups.
	PreModifierGroups = Resource[restaurantapi.PreModifierGroup]{path: "preModifierGroups", guid: func(v *restaurantapi.PreModifierGroup) string { return v.Guid }}
	// PriceGroups are the restaurant's price groups.
	PriceGroups = Resource[restaurantapi.PriceGroup]{path: "priceGroups", guid: func(v *restaurantapi.PriceGroup) string { return v.Guid }}
	// Printers are the restaurant's printers.
	Printers = Resource[restaurantapi.Printer]{path: "printers", guid: func(v *restaurantapi.Printer) string { return v.Guid }}
	// RestaurantServices are the restaurant's restaurant services.
	RestaurantServices = Resource[restaurantapi.RestaurantService]{path: "restaurantServices", guid: func(v *restaurantapi.RestaurantService) string { return v.Guid }}
	// RevenueCenters are the restaurant's revenue centers.
	RevenueCenters = Resource[restaurantapi.RevenueCenter]{path: "revenueCenters", guid: func(v *restaurantapi.RevenueCenter) string { return v.Guid }}
	// SalesCategories are the restaurant's sales categories.
	SalesCategories = Resource[restaurantapi.SalesCategory]{path: "salesCategories", guid: func(v *restaurantapi.SalesCategory) string { return v.Guid }}
	// ServiceAreas are the restaurant's service areas.
	ServiceAreas = Resource[restaurantapi.ServiceArea]{path: "serviceAreas", guid: func(v *restaurantapi.ServiceArea) string { return v.Guid }}
	// ServiceCharges are the restaurant's service charges.
	ServiceCharges = Resource[restaurantapi.ServiceCharge]{path: "serviceCharges", guid: func(v *restaurantapi.ServiceCharge) string { return v.Guid }}
	// Tables are the restaurant's tables.
	Tables = Resource[restaurantapi.Table]{path: "tables", guid: func(v *restaurantapi.Table) string { return v.Guid }}
	// TaxRates are the restaurant's tax rates.
	TaxRates = Resource[restaurantapi.TaxRate]{path: "taxRates", guid: func(v *restaurantapi.TaxRate) string { return v.Guid }}
	// VoidReasons are the restaurant's void reasons.
	VoidReasons = Resource[restaurantapi.VoidReason]{path: "voidReasons", guid: func(v *restaurantapi.VoidReason) string { return v.Guid }}
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
