// Code below is one List and one Get method per resource of the
// configuration API; each is a thin call of the package's generic list and
// get, so every resource has the same shape.

package restaurant

import (
	"context"
	"iter"
)

// ListAlternatePaymentTypes iterates over the restaurant's alternate payment types, following the page
// tokens to the end (see the package doc); iteration stops at the first error,
// which it yields.
func (c *Client) ListAlternatePaymentTypes(ctx context.Context, opts *ListOptions) iter.Seq2[AlternatePaymentType, error] {
	return list(ctx, c, AlternatePaymentTypes, opts)
}

// GetAlternatePaymentType returns one of the restaurant's alternate payment types by GUID; an *Error with
// Key NotFound when it does not exist (or was archived or removed).
func (c *Client) GetAlternatePaymentType(ctx context.Context, guid string) (*AlternatePaymentType, error) {
	return get(ctx, c, AlternatePaymentTypes, guid)
}

// ListBreakTypes iterates over the restaurant's break types, following the page
// tokens to the end (see the package doc); iteration stops at the first error,
// which it yields.
func (c *Client) ListBreakTypes(ctx context.Context, opts *ListOptions) iter.Seq2[BreakType, error] {
	return list(ctx, c, BreakTypes, opts)
}

// GetBreakType returns one of the restaurant's break types by GUID; an *Error with
// Key NotFound when it does not exist (or was archived or removed).
func (c *Client) GetBreakType(ctx context.Context, guid string) (*BreakType, error) {
	return get(ctx, c, BreakTypes, guid)
}

// ListCashDrawers iterates over the restaurant's cash drawers, following the page
// tokens to the end (see the package doc); iteration stops at the first error,
// which it yields.
func (c *Client) ListCashDrawers(ctx context.Context, opts *ListOptions) iter.Seq2[CashDrawer, error] {
	return list(ctx, c, CashDrawers, opts)
}

// GetCashDrawer returns one of the restaurant's cash drawers by GUID; an *Error with
// Key NotFound when it does not exist (or was archived or removed).
func (c *Client) GetCashDrawer(ctx context.Context, guid string) (*CashDrawer, error) {
	return get(ctx, c, CashDrawers, guid)
}

// ListDiningOptions iterates over the restaurant's dining options, following the page
// tokens to the end (see the package doc); iteration stops at the first error,
// which it yields.
func (c *Client) ListDiningOptions(ctx context.Context, opts *ListOptions) iter.Seq2[DiningOption, error] {
	return list(ctx, c, DiningOptions, opts)
}

// GetDiningOption returns one of the restaurant's dining options by GUID; an *Error with
// Key NotFound when it does not exist (or was archived or removed).
func (c *Client) GetDiningOption(ctx context.Context, guid string) (*DiningOption, error) {
	return get(ctx, c, DiningOptions, guid)
}

// ListDiscounts iterates over the restaurant's discounts, following the page
// tokens to the end (see the package doc); iteration stops at the first error,
// which it yields.
func (c *Client) ListDiscounts(ctx context.Context, opts *ListOptions) iter.Seq2[Discount, error] {
	return list(ctx, c, Discounts, opts)
}

// GetDiscount returns one of the restaurant's discounts by GUID; an *Error with
// Key NotFound when it does not exist (or was archived or removed).
func (c *Client) GetDiscount(ctx context.Context, guid string) (*Discount, error) {
	return get(ctx, c, Discounts, guid)
}

// ListMenuGroups iterates over the restaurant's menu groups, following the page
// tokens to the end (see the package doc); iteration stops at the first error,
// which it yields.
func (c *Client) ListMenuGroups(ctx context.Context, opts *ListOptions) iter.Seq2[MenuGroup, error] {
	return list(ctx, c, MenuGroups, opts)
}

// GetMenuGroup returns one of the restaurant's menu groups by GUID; an *Error with
// Key NotFound when it does not exist (or was archived or removed).
func (c *Client) GetMenuGroup(ctx context.Context, guid string) (*MenuGroup, error) {
	return get(ctx, c, MenuGroups, guid)
}

// ListMenuItems iterates over the restaurant's menu items and modifiers, following the page
// tokens to the end (see the package doc); iteration stops at the first error,
// which it yields.
func (c *Client) ListMenuItems(ctx context.Context, opts *ListOptions) iter.Seq2[MenuItem, error] {
	return list(ctx, c, MenuItems, opts)
}

// GetMenuItem returns one of the restaurant's menu items and modifiers by GUID; an *Error with
// Key NotFound when it does not exist (or was archived or removed).
func (c *Client) GetMenuItem(ctx context.Context, guid string) (*MenuItem, error) {
	return get(ctx, c, MenuItems, guid)
}

// ListMenuOptionGroups iterates over the restaurant's modifier groups, following the page
// tokens to the end (see the package doc); iteration stops at the first error,
// which it yields.
func (c *Client) ListMenuOptionGroups(ctx context.Context, opts *ListOptions) iter.Seq2[MenuOptionGroup, error] {
	return list(ctx, c, MenuOptionGroups, opts)
}

// GetMenuOptionGroup returns one of the restaurant's modifier groups by GUID; an *Error with
// Key NotFound when it does not exist (or was archived or removed).
func (c *Client) GetMenuOptionGroup(ctx context.Context, guid string) (*MenuOptionGroup, error) {
	return get(ctx, c, MenuOptionGroups, guid)
}

// ListMenus iterates over the restaurant's menus, following the page
// tokens to the end (see the package doc); iteration stops at the first error,
// which it yields.
func (c *Client) ListMenus(ctx context.Context, opts *ListOptions) iter.Seq2[Menu, error] {
	return list(ctx, c, Menus, opts)
}

// GetMenu returns one of the restaurant's menus by GUID; an *Error with
// Key NotFound when it does not exist (or was archived or removed).
func (c *Client) GetMenu(ctx context.Context, guid string) (*Menu, error) {
	return get(ctx, c, Menus, guid)
}

// ListNoSaleReasons iterates over the restaurant's no-sale reasons, following the page
// tokens to the end (see the package doc); iteration stops at the first error,
// which it yields.
func (c *Client) ListNoSaleReasons(ctx context.Context, opts *ListOptions) iter.Seq2[NoSaleReason, error] {
	return list(ctx, c, NoSaleReasons, opts)
}

// GetNoSaleReason returns one of the restaurant's no-sale reasons by GUID; an *Error with
// Key NotFound when it does not exist (or was archived or removed).
func (c *Client) GetNoSaleReason(ctx context.Context, guid string) (*NoSaleReason, error) {
	return get(ctx, c, NoSaleReasons, guid)
}

// ListPayoutReasons iterates over the restaurant's payout reasons, following the page
// tokens to the end (see the package doc); iteration stops at the first error,
// which it yields.
func (c *Client) ListPayoutReasons(ctx context.Context, opts *ListOptions) iter.Seq2[PayoutReason, error] {
	return list(ctx, c, PayoutReasons, opts)
}

// GetPayoutReason returns one of the restaurant's payout reasons by GUID; an *Error with
// Key NotFound when it does not exist (or was archived or removed).
func (c *Client) GetPayoutReason(ctx context.Context, guid string) (*PayoutReason, error) {
	return get(ctx, c, PayoutReasons, guid)
}

// ListPreModifiers iterates over the restaurant's pre-modifiers, following the page
// tokens to the end (see the package doc); iteration stops at the first error,
// which it yields.
func (c *Client) ListPreModifiers(ctx context.Context, opts *ListOptions) iter.Seq2[PreModifier, error] {
	return list(ctx, c, PreModifiers, opts)
}

// GetPreModifier returns one of the restaurant's pre-modifiers by GUID; an *Error with
// Key NotFound when it does not exist (or was archived or removed).
func (c *Client) GetPreModifier(ctx context.Context, guid string) (*PreModifier, error) {
	return get(ctx, c, PreModifiers, guid)
}

// ListPreModifierGroups iterates over the restaurant's pre-modifier groups, following the page
// tokens to the end (see the package doc); iteration stops at the first error,
// which it yields.
func (c *Client) ListPreModifierGroups(ctx context.Context, opts *ListOptions) iter.Seq2[PreModifierGroup, error] {
	return list(ctx, c, PreModifierGroups, opts)
}

// GetPreModifierGroup returns one of the restaurant's pre-modifier groups by GUID; an *Error with
// Key NotFound when it does not exist (or was archived or removed).
func (c *Client) GetPreModifierGroup(ctx context.Context, guid string) (*PreModifierGroup, error) {
	return get(ctx, c, PreModifierGroups, guid)
}

// ListPriceGroups iterates over the restaurant's price groups, following the page
// tokens to the end (see the package doc); iteration stops at the first error,
// which it yields.
func (c *Client) ListPriceGroups(ctx context.Context, opts *ListOptions) iter.Seq2[PriceGroup, error] {
	return list(ctx, c, PriceGroups, opts)
}

// GetPriceGroup returns one of the restaurant's price groups by GUID; an *Error with
// Key NotFound when it does not exist (or was archived or removed).
func (c *Client) GetPriceGroup(ctx context.Context, guid string) (*PriceGroup, error) {
	return get(ctx, c, PriceGroups, guid)
}

// ListPrinters iterates over the restaurant's printers, following the page
// tokens to the end (see the package doc); iteration stops at the first error,
// which it yields.
func (c *Client) ListPrinters(ctx context.Context, opts *ListOptions) iter.Seq2[Printer, error] {
	return list(ctx, c, Printers, opts)
}

// GetPrinter returns one of the restaurant's printers by GUID; an *Error with
// Key NotFound when it does not exist (or was archived or removed).
func (c *Client) GetPrinter(ctx context.Context, guid string) (*Printer, error) {
	return get(ctx, c, Printers, guid)
}

// ListRestaurantServices iterates over the restaurant's restaurant services, following the page
// tokens to the end (see the package doc); iteration stops at the first error,
// which it yields.
func (c *Client) ListRestaurantServices(ctx context.Context, opts *ListOptions) iter.Seq2[RestaurantService, error] {
	return list(ctx, c, RestaurantServices, opts)
}

// GetRestaurantService returns one of the restaurant's restaurant services by GUID; an *Error with
// Key NotFound when it does not exist (or was archived or removed).
func (c *Client) GetRestaurantService(ctx context.Context, guid string) (*RestaurantService, error) {
	return get(ctx, c, RestaurantServices, guid)
}

// ListRevenueCenters iterates over the restaurant's revenue centers, following the page
// tokens to the end (see the package doc); iteration stops at the first error,
// which it yields.
func (c *Client) ListRevenueCenters(ctx context.Context, opts *ListOptions) iter.Seq2[RevenueCenter, error] {
	return list(ctx, c, RevenueCenters, opts)
}

// GetRevenueCenter returns one of the restaurant's revenue centers by GUID; an *Error with
// Key NotFound when it does not exist (or was archived or removed).
func (c *Client) GetRevenueCenter(ctx context.Context, guid string) (*RevenueCenter, error) {
	return get(ctx, c, RevenueCenters, guid)
}

// ListSalesCategories iterates over the restaurant's sales categories, following the page
// tokens to the end (see the package doc); iteration stops at the first error,
// which it yields.
func (c *Client) ListSalesCategories(ctx context.Context, opts *ListOptions) iter.Seq2[SalesCategory, error] {
	return list(ctx, c, SalesCategories, opts)
}

// GetSalesCategory returns one of the restaurant's sales categories by GUID; an *Error with
// Key NotFound when it does not exist (or was archived or removed).
func (c *Client) GetSalesCategory(ctx context.Context, guid string) (*SalesCategory, error) {
	return get(ctx, c, SalesCategories, guid)
}

// ListServiceAreas iterates over the restaurant's service areas, following the page
// tokens to the end (see the package doc); iteration stops at the first error,
// which it yields.
func (c *Client) ListServiceAreas(ctx context.Context, opts *ListOptions) iter.Seq2[ServiceArea, error] {
	return list(ctx, c, ServiceAreas, opts)
}

// GetServiceArea returns one of the restaurant's service areas by GUID; an *Error with
// Key NotFound when it does not exist (or was archived or removed).
func (c *Client) GetServiceArea(ctx context.Context, guid string) (*ServiceArea, error) {
	return get(ctx, c, ServiceAreas, guid)
}

// ListServiceCharges iterates over the restaurant's service charges, following the page
// tokens to the end (see the package doc); iteration stops at the first error,
// which it yields.
func (c *Client) ListServiceCharges(ctx context.Context, opts *ListOptions) iter.Seq2[ServiceCharge, error] {
	return list(ctx, c, ServiceCharges, opts)
}

// GetServiceCharge returns one of the restaurant's service charges by GUID; an *Error with
// Key NotFound when it does not exist (or was archived or removed).
func (c *Client) GetServiceCharge(ctx context.Context, guid string) (*ServiceCharge, error) {
	return get(ctx, c, ServiceCharges, guid)
}

// ListTables iterates over the restaurant's tables, following the page
// tokens to the end (see the package doc); iteration stops at the first error,
// which it yields.
func (c *Client) ListTables(ctx context.Context, opts *ListOptions) iter.Seq2[Table, error] {
	return list(ctx, c, Tables, opts)
}

// GetTable returns one of the restaurant's tables by GUID; an *Error with
// Key NotFound when it does not exist (or was archived or removed).
func (c *Client) GetTable(ctx context.Context, guid string) (*Table, error) {
	return get(ctx, c, Tables, guid)
}

// ListTaxRates iterates over the restaurant's tax rates, following the page
// tokens to the end (see the package doc); iteration stops at the first error,
// which it yields.
func (c *Client) ListTaxRates(ctx context.Context, opts *ListOptions) iter.Seq2[TaxRate, error] {
	return list(ctx, c, TaxRates, opts)
}

// GetTaxRate returns one of the restaurant's tax rates by GUID; an *Error with
// Key NotFound when it does not exist (or was archived or removed).
func (c *Client) GetTaxRate(ctx context.Context, guid string) (*TaxRate, error) {
	return get(ctx, c, TaxRates, guid)
}

// ListVoidReasons iterates over the restaurant's void reasons, following the page
// tokens to the end (see the package doc); iteration stops at the first error,
// which it yields.
func (c *Client) ListVoidReasons(ctx context.Context, opts *ListOptions) iter.Seq2[VoidReason, error] {
	return list(ctx, c, VoidReasons, opts)
}

// GetVoidReason returns one of the restaurant's void reasons by GUID; an *Error with
// Key NotFound when it does not exist (or was archived or removed).
func (c *Client) GetVoidReason(ctx context.Context, guid string) (*VoidReason, error) {
	return get(ctx, c, VoidReasons, guid)
}
