package restaurant

// The list and get operations of every resource, in the order of the spec.
// Each is a typed shell around list and get (server.go).

import (
	"context"

	"github.com/apistack/apistack/gen/restaurantapi"
)

// ListAlternatePaymentTypes lists the restaurant's alternate payment types.
func (s *Server) ListAlternatePaymentTypes(ctx context.Context, req restaurantapi.ListAlternatePaymentTypesRequestObject) (restaurantapi.ListAlternatePaymentTypesResponseObject, error) {
	body, next, err := list[restaurantapi.AlternatePaymentType](ctx, s, "alternatePaymentTypes", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return restaurantapi.ListAlternatePaymentTypes200JSONResponse{Body: body, Headers: restaurantapi.ListAlternatePaymentTypes200ResponseHeaders{PlatformNextPageToken: next}}, nil
}

// GetAlternatePaymentType returns one of the restaurant's alternate payment types.
func (s *Server) GetAlternatePaymentType(ctx context.Context, req restaurantapi.GetAlternatePaymentTypeRequestObject) (restaurantapi.GetAlternatePaymentTypeResponseObject, error) {
	v, err := get[restaurantapi.AlternatePaymentType](ctx, s, "alternatePaymentTypes", req.Guid)
	if err != nil {
		return nil, err
	}
	return restaurantapi.GetAlternatePaymentType200JSONResponse(v), nil
}

// ListBreakTypes lists the restaurant's break types.
func (s *Server) ListBreakTypes(ctx context.Context, req restaurantapi.ListBreakTypesRequestObject) (restaurantapi.ListBreakTypesResponseObject, error) {
	body, next, err := list[restaurantapi.BreakType](ctx, s, "breakTypes", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return restaurantapi.ListBreakTypes200JSONResponse{Body: body, Headers: restaurantapi.ListBreakTypes200ResponseHeaders{PlatformNextPageToken: next}}, nil
}

// GetBreakType returns one of the restaurant's break types.
func (s *Server) GetBreakType(ctx context.Context, req restaurantapi.GetBreakTypeRequestObject) (restaurantapi.GetBreakTypeResponseObject, error) {
	v, err := get[restaurantapi.BreakType](ctx, s, "breakTypes", req.Guid)
	if err != nil {
		return nil, err
	}
	return restaurantapi.GetBreakType200JSONResponse(v), nil
}

// ListCashDrawers lists the restaurant's cash drawers.
func (s *Server) ListCashDrawers(ctx context.Context, req restaurantapi.ListCashDrawersRequestObject) (restaurantapi.ListCashDrawersResponseObject, error) {
	body, next, err := list[restaurantapi.CashDrawer](ctx, s, "cashDrawers", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return restaurantapi.ListCashDrawers200JSONResponse{Body: body, Headers: restaurantapi.ListCashDrawers200ResponseHeaders{PlatformNextPageToken: next}}, nil
}

// GetCashDrawer returns one of the restaurant's cash drawers.
func (s *Server) GetCashDrawer(ctx context.Context, req restaurantapi.GetCashDrawerRequestObject) (restaurantapi.GetCashDrawerResponseObject, error) {
	v, err := get[restaurantapi.CashDrawer](ctx, s, "cashDrawers", req.Guid)
	if err != nil {
		return nil, err
	}
	return restaurantapi.GetCashDrawer200JSONResponse(v), nil
}

// ListDiningOptions lists the restaurant's dining options.
func (s *Server) ListDiningOptions(ctx context.Context, req restaurantapi.ListDiningOptionsRequestObject) (restaurantapi.ListDiningOptionsResponseObject, error) {
	body, next, err := list[restaurantapi.DiningOption](ctx, s, "diningOptions", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return restaurantapi.ListDiningOptions200JSONResponse{Body: body, Headers: restaurantapi.ListDiningOptions200ResponseHeaders{PlatformNextPageToken: next}}, nil
}

// GetDiningOption returns one of the restaurant's dining options.
func (s *Server) GetDiningOption(ctx context.Context, req restaurantapi.GetDiningOptionRequestObject) (restaurantapi.GetDiningOptionResponseObject, error) {
	v, err := get[restaurantapi.DiningOption](ctx, s, "diningOptions", req.Guid)
	if err != nil {
		return nil, err
	}
	return restaurantapi.GetDiningOption200JSONResponse(v), nil
}

// ListDiscounts lists the restaurant's discounts.
func (s *Server) ListDiscounts(ctx context.Context, req restaurantapi.ListDiscountsRequestObject) (restaurantapi.ListDiscountsResponseObject, error) {
	body, next, err := list[restaurantapi.Discount](ctx, s, "discounts", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return restaurantapi.ListDiscounts200JSONResponse{Body: body, Headers: restaurantapi.ListDiscounts200ResponseHeaders{PlatformNextPageToken: next}}, nil
}

// GetDiscount returns one of the restaurant's discounts.
func (s *Server) GetDiscount(ctx context.Context, req restaurantapi.GetDiscountRequestObject) (restaurantapi.GetDiscountResponseObject, error) {
	v, err := get[restaurantapi.Discount](ctx, s, "discounts", req.Guid)
	if err != nil {
		return nil, err
	}
	return restaurantapi.GetDiscount200JSONResponse(v), nil
}

// ListMenuGroups lists the restaurant's menu groups.
func (s *Server) ListMenuGroups(ctx context.Context, req restaurantapi.ListMenuGroupsRequestObject) (restaurantapi.ListMenuGroupsResponseObject, error) {
	body, next, err := list[restaurantapi.MenuGroup](ctx, s, "menuGroups", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return restaurantapi.ListMenuGroups200JSONResponse{Body: body, Headers: restaurantapi.ListMenuGroups200ResponseHeaders{PlatformNextPageToken: next}}, nil
}

// GetMenuGroup returns one of the restaurant's menu groups.
func (s *Server) GetMenuGroup(ctx context.Context, req restaurantapi.GetMenuGroupRequestObject) (restaurantapi.GetMenuGroupResponseObject, error) {
	v, err := get[restaurantapi.MenuGroup](ctx, s, "menuGroups", req.Guid)
	if err != nil {
		return nil, err
	}
	return restaurantapi.GetMenuGroup200JSONResponse(v), nil
}

// ListMenuItems lists the restaurant's menu items and modifiers.
func (s *Server) ListMenuItems(ctx context.Context, req restaurantapi.ListMenuItemsRequestObject) (restaurantapi.ListMenuItemsResponseObject, error) {
	body, next, err := list[restaurantapi.MenuItem](ctx, s, "menuItems", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return restaurantapi.ListMenuItems200JSONResponse{Body: body, Headers: restaurantapi.ListMenuItems200ResponseHeaders{PlatformNextPageToken: next}}, nil
}

// GetMenuItem returns one of the restaurant's menu items and modifiers.
func (s *Server) GetMenuItem(ctx context.Context, req restaurantapi.GetMenuItemRequestObject) (restaurantapi.GetMenuItemResponseObject, error) {
	v, err := get[restaurantapi.MenuItem](ctx, s, "menuItems", req.Guid)
	if err != nil {
		return nil, err
	}
	return restaurantapi.GetMenuItem200JSONResponse(v), nil
}

// ListMenuOptionGroups lists the restaurant's modifier groups.
func (s *Server) ListMenuOptionGroups(ctx context.Context, req restaurantapi.ListMenuOptionGroupsRequestObject) (restaurantapi.ListMenuOptionGroupsResponseObject, error) {
	body, next, err := list[restaurantapi.MenuOptionGroup](ctx, s, "menuOptionGroups", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return restaurantapi.ListMenuOptionGroups200JSONResponse{Body: body, Headers: restaurantapi.ListMenuOptionGroups200ResponseHeaders{PlatformNextPageToken: next}}, nil
}

// GetMenuOptionGroup returns one of the restaurant's modifier groups.
func (s *Server) GetMenuOptionGroup(ctx context.Context, req restaurantapi.GetMenuOptionGroupRequestObject) (restaurantapi.GetMenuOptionGroupResponseObject, error) {
	v, err := get[restaurantapi.MenuOptionGroup](ctx, s, "menuOptionGroups", req.Guid)
	if err != nil {
		return nil, err
	}
	return restaurantapi.GetMenuOptionGroup200JSONResponse(v), nil
}

// ListMenus lists the restaurant's menus.
func (s *Server) ListMenus(ctx context.Context, req restaurantapi.ListMenusRequestObject) (restaurantapi.ListMenusResponseObject, error) {
	body, next, err := list[restaurantapi.Menu](ctx, s, "menus", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return restaurantapi.ListMenus200JSONResponse{Body: body, Headers: restaurantapi.ListMenus200ResponseHeaders{PlatformNextPageToken: next}}, nil
}

// GetMenu returns one of the restaurant's menus.
func (s *Server) GetMenu(ctx context.Context, req restaurantapi.GetMenuRequestObject) (restaurantapi.GetMenuResponseObject, error) {
	v, err := get[restaurantapi.Menu](ctx, s, "menus", req.Guid)
	if err != nil {
		return nil, err
	}
	return restaurantapi.GetMenu200JSONResponse(v), nil
}

// ListNoSaleReasons lists the restaurant's no-sale reasons.
func (s *Server) ListNoSaleReasons(ctx context.Context, req restaurantapi.ListNoSaleReasonsRequestObject) (restaurantapi.ListNoSaleReasonsResponseObject, error) {
	body, next, err := list[restaurantapi.NoSaleReason](ctx, s, "noSaleReasons", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return restaurantapi.ListNoSaleReasons200JSONResponse{Body: body, Headers: restaurantapi.ListNoSaleReasons200ResponseHeaders{PlatformNextPageToken: next}}, nil
}

// GetNoSaleReason returns one of the restaurant's no-sale reasons.
func (s *Server) GetNoSaleReason(ctx context.Context, req restaurantapi.GetNoSaleReasonRequestObject) (restaurantapi.GetNoSaleReasonResponseObject, error) {
	v, err := get[restaurantapi.NoSaleReason](ctx, s, "noSaleReasons", req.Guid)
	if err != nil {
		return nil, err
	}
	return restaurantapi.GetNoSaleReason200JSONResponse(v), nil
}

// ListPayoutReasons lists the restaurant's payout reasons.
func (s *Server) ListPayoutReasons(ctx context.Context, req restaurantapi.ListPayoutReasonsRequestObject) (restaurantapi.ListPayoutReasonsResponseObject, error) {
	body, next, err := list[restaurantapi.PayoutReason](ctx, s, "payoutReasons", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return restaurantapi.ListPayoutReasons200JSONResponse{Body: body, Headers: restaurantapi.ListPayoutReasons200ResponseHeaders{PlatformNextPageToken: next}}, nil
}

// GetPayoutReason returns one of the restaurant's payout reasons.
func (s *Server) GetPayoutReason(ctx context.Context, req restaurantapi.GetPayoutReasonRequestObject) (restaurantapi.GetPayoutReasonResponseObject, error) {
	v, err := get[restaurantapi.PayoutReason](ctx, s, "payoutReasons", req.Guid)
	if err != nil {
		return nil, err
	}
	return restaurantapi.GetPayoutReason200JSONResponse(v), nil
}

// ListPreModifiers lists the restaurant's pre-modifiers.
func (s *Server) ListPreModifiers(ctx context.Context, req restaurantapi.ListPreModifiersRequestObject) (restaurantapi.ListPreModifiersResponseObject, error) {
	body, next, err := list[restaurantapi.PreModifier](ctx, s, "preModifiers", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return restaurantapi.ListPreModifiers200JSONResponse{Body: body, Headers: restaurantapi.ListPreModifiers200ResponseHeaders{PlatformNextPageToken: next}}, nil
}

// GetPreModifier returns one of the restaurant's pre-modifiers.
func (s *Server) GetPreModifier(ctx context.Context, req restaurantapi.GetPreModifierRequestObject) (restaurantapi.GetPreModifierResponseObject, error) {
	v, err := get[restaurantapi.PreModifier](ctx, s, "preModifiers", req.Guid)
	if err != nil {
		return nil, err
	}
	return restaurantapi.GetPreModifier200JSONResponse(v), nil
}

// ListPreModifierGroups lists the restaurant's pre-modifier groups.
func (s *Server) ListPreModifierGroups(ctx context.Context, req restaurantapi.ListPreModifierGroupsRequestObject) (restaurantapi.ListPreModifierGroupsResponseObject, error) {
	body, next, err := list[restaurantapi.PreModifierGroup](ctx, s, "preModifierGroups", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return restaurantapi.ListPreModifierGroups200JSONResponse{Body: body, Headers: restaurantapi.ListPreModifierGroups200ResponseHeaders{PlatformNextPageToken: next}}, nil
}

// GetPreModifierGroup returns one of the restaurant's pre-modifier groups.
func (s *Server) GetPreModifierGroup(ctx context.Context, req restaurantapi.GetPreModifierGroupRequestObject) (restaurantapi.GetPreModifierGroupResponseObject, error) {
	v, err := get[restaurantapi.PreModifierGroup](ctx, s, "preModifierGroups", req.Guid)
	if err != nil {
		return nil, err
	}
	return restaurantapi.GetPreModifierGroup200JSONResponse(v), nil
}

// ListPriceGroups lists the restaurant's price groups.
func (s *Server) ListPriceGroups(ctx context.Context, req restaurantapi.ListPriceGroupsRequestObject) (restaurantapi.ListPriceGroupsResponseObject, error) {
	body, next, err := list[restaurantapi.PriceGroup](ctx, s, "priceGroups", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return restaurantapi.ListPriceGroups200JSONResponse{Body: body, Headers: restaurantapi.ListPriceGroups200ResponseHeaders{PlatformNextPageToken: next}}, nil
}

// GetPriceGroup returns one of the restaurant's price groups.
func (s *Server) GetPriceGroup(ctx context.Context, req restaurantapi.GetPriceGroupRequestObject) (restaurantapi.GetPriceGroupResponseObject, error) {
	v, err := get[restaurantapi.PriceGroup](ctx, s, "priceGroups", req.Guid)
	if err != nil {
		return nil, err
	}
	return restaurantapi.GetPriceGroup200JSONResponse(v), nil
}

// ListPrinters lists the restaurant's printers.
func (s *Server) ListPrinters(ctx context.Context, req restaurantapi.ListPrintersRequestObject) (restaurantapi.ListPrintersResponseObject, error) {
	body, next, err := list[restaurantapi.Printer](ctx, s, "printers", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return restaurantapi.ListPrinters200JSONResponse{Body: body, Headers: restaurantapi.ListPrinters200ResponseHeaders{PlatformNextPageToken: next}}, nil
}

// GetPrinter returns one of the restaurant's printers.
func (s *Server) GetPrinter(ctx context.Context, req restaurantapi.GetPrinterRequestObject) (restaurantapi.GetPrinterResponseObject, error) {
	v, err := get[restaurantapi.Printer](ctx, s, "printers", req.Guid)
	if err != nil {
		return nil, err
	}
	return restaurantapi.GetPrinter200JSONResponse(v), nil
}

// ListRestaurantServices lists the restaurant's restaurant services.
func (s *Server) ListRestaurantServices(ctx context.Context, req restaurantapi.ListRestaurantServicesRequestObject) (restaurantapi.ListRestaurantServicesResponseObject, error) {
	body, next, err := list[restaurantapi.RestaurantService](ctx, s, "restaurantServices", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return restaurantapi.ListRestaurantServices200JSONResponse{Body: body, Headers: restaurantapi.ListRestaurantServices200ResponseHeaders{PlatformNextPageToken: next}}, nil
}

// GetRestaurantService returns one of the restaurant's restaurant services.
func (s *Server) GetRestaurantService(ctx context.Context, req restaurantapi.GetRestaurantServiceRequestObject) (restaurantapi.GetRestaurantServiceResponseObject, error) {
	v, err := get[restaurantapi.RestaurantService](ctx, s, "restaurantServices", req.Guid)
	if err != nil {
		return nil, err
	}
	return restaurantapi.GetRestaurantService200JSONResponse(v), nil
}

// ListRevenueCenters lists the restaurant's revenue centers.
func (s *Server) ListRevenueCenters(ctx context.Context, req restaurantapi.ListRevenueCentersRequestObject) (restaurantapi.ListRevenueCentersResponseObject, error) {
	body, next, err := list[restaurantapi.RevenueCenter](ctx, s, "revenueCenters", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return restaurantapi.ListRevenueCenters200JSONResponse{Body: body, Headers: restaurantapi.ListRevenueCenters200ResponseHeaders{PlatformNextPageToken: next}}, nil
}

// GetRevenueCenter returns one of the restaurant's revenue centers.
func (s *Server) GetRevenueCenter(ctx context.Context, req restaurantapi.GetRevenueCenterRequestObject) (restaurantapi.GetRevenueCenterResponseObject, error) {
	v, err := get[restaurantapi.RevenueCenter](ctx, s, "revenueCenters", req.Guid)
	if err != nil {
		return nil, err
	}
	return restaurantapi.GetRevenueCenter200JSONResponse(v), nil
}

// ListSalesCategories lists the restaurant's sales categories.
func (s *Server) ListSalesCategories(ctx context.Context, req restaurantapi.ListSalesCategoriesRequestObject) (restaurantapi.ListSalesCategoriesResponseObject, error) {
	body, next, err := list[restaurantapi.SalesCategory](ctx, s, "salesCategories", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return restaurantapi.ListSalesCategories200JSONResponse{Body: body, Headers: restaurantapi.ListSalesCategories200ResponseHeaders{PlatformNextPageToken: next}}, nil
}

// GetSalesCategory returns one of the restaurant's sales categories.
func (s *Server) GetSalesCategory(ctx context.Context, req restaurantapi.GetSalesCategoryRequestObject) (restaurantapi.GetSalesCategoryResponseObject, error) {
	v, err := get[restaurantapi.SalesCategory](ctx, s, "salesCategories", req.Guid)
	if err != nil {
		return nil, err
	}
	return restaurantapi.GetSalesCategory200JSONResponse(v), nil
}

// ListServiceAreas lists the restaurant's service areas.
func (s *Server) ListServiceAreas(ctx context.Context, req restaurantapi.ListServiceAreasRequestObject) (restaurantapi.ListServiceAreasResponseObject, error) {
	body, next, err := list[restaurantapi.ServiceArea](ctx, s, "serviceAreas", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return restaurantapi.ListServiceAreas200JSONResponse{Body: body, Headers: restaurantapi.ListServiceAreas200ResponseHeaders{PlatformNextPageToken: next}}, nil
}

// GetServiceArea returns one of the restaurant's service areas.
func (s *Server) GetServiceArea(ctx context.Context, req restaurantapi.GetServiceAreaRequestObject) (restaurantapi.GetServiceAreaResponseObject, error) {
	v, err := get[restaurantapi.ServiceArea](ctx, s, "serviceAreas", req.Guid)
	if err != nil {
		return nil, err
	}
	return restaurantapi.GetServiceArea200JSONResponse(v), nil
}

// ListServiceCharges lists the restaurant's service charges.
func (s *Server) ListServiceCharges(ctx context.Context, req restaurantapi.ListServiceChargesRequestObject) (restaurantapi.ListServiceChargesResponseObject, error) {
	body, next, err := list[restaurantapi.ServiceCharge](ctx, s, "serviceCharges", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return restaurantapi.ListServiceCharges200JSONResponse{Body: body, Headers: restaurantapi.ListServiceCharges200ResponseHeaders{PlatformNextPageToken: next}}, nil
}

// GetServiceCharge returns one of the restaurant's service charges.
func (s *Server) GetServiceCharge(ctx context.Context, req restaurantapi.GetServiceChargeRequestObject) (restaurantapi.GetServiceChargeResponseObject, error) {
	v, err := get[restaurantapi.ServiceCharge](ctx, s, "serviceCharges", req.Guid)
	if err != nil {
		return nil, err
	}
	return restaurantapi.GetServiceCharge200JSONResponse(v), nil
}

// ListTables lists the restaurant's tables.
func (s *Server) ListTables(ctx context.Context, req restaurantapi.ListTablesRequestObject) (restaurantapi.ListTablesResponseObject, error) {
	body, next, err := list[restaurantapi.Table](ctx, s, "tables", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return restaurantapi.ListTables200JSONResponse{Body: body, Headers: restaurantapi.ListTables200ResponseHeaders{PlatformNextPageToken: next}}, nil
}

// GetTable returns one of the restaurant's tables.
func (s *Server) GetTable(ctx context.Context, req restaurantapi.GetTableRequestObject) (restaurantapi.GetTableResponseObject, error) {
	v, err := get[restaurantapi.Table](ctx, s, "tables", req.Guid)
	if err != nil {
		return nil, err
	}
	return restaurantapi.GetTable200JSONResponse(v), nil
}

// ListTaxRates lists the restaurant's tax rates.
func (s *Server) ListTaxRates(ctx context.Context, req restaurantapi.ListTaxRatesRequestObject) (restaurantapi.ListTaxRatesResponseObject, error) {
	body, next, err := list[restaurantapi.TaxRate](ctx, s, "taxRates", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return restaurantapi.ListTaxRates200JSONResponse{Body: body, Headers: restaurantapi.ListTaxRates200ResponseHeaders{PlatformNextPageToken: next}}, nil
}

// GetTaxRate returns one of the restaurant's tax rates.
func (s *Server) GetTaxRate(ctx context.Context, req restaurantapi.GetTaxRateRequestObject) (restaurantapi.GetTaxRateResponseObject, error) {
	v, err := get[restaurantapi.TaxRate](ctx, s, "taxRates", req.Guid)
	if err != nil {
		return nil, err
	}
	return restaurantapi.GetTaxRate200JSONResponse(v), nil
}

// ListVoidReasons lists the restaurant's void reasons.
func (s *Server) ListVoidReasons(ctx context.Context, req restaurantapi.ListVoidReasonsRequestObject) (restaurantapi.ListVoidReasonsResponseObject, error) {
	body, next, err := list[restaurantapi.VoidReason](ctx, s, "voidReasons", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return restaurantapi.ListVoidReasons200JSONResponse{Body: body, Headers: restaurantapi.ListVoidReasons200ResponseHeaders{PlatformNextPageToken: next}}, nil
}

// GetVoidReason returns one of the restaurant's void reasons.
func (s *Server) GetVoidReason(ctx context.Context, req restaurantapi.GetVoidReasonRequestObject) (restaurantapi.GetVoidReasonResponseObject, error) {
	v, err := get[restaurantapi.VoidReason](ctx, s, "voidReasons", req.Guid)
	if err != nil {
		return nil, err
	}
	return restaurantapi.GetVoidReason200JSONResponse(v), nil
}
