package restaurant

// The list and get operations of every resource, in the order of the spec.
// Each is a typed shell around page and get (server.go), answering the
// stored documents as they are (raw.go).

import (
	"context"

	"github.com/apistack/apistack/gen/restaurantserver"
)

// ListAlternatePaymentTypes lists the restaurant's alternate payment types.
func (s *Server) ListAlternatePaymentTypes(ctx context.Context, req restaurantserver.ListAlternatePaymentTypesRequestObject) (restaurantserver.ListAlternatePaymentTypesResponseObject, error) {
	rows, next, err := s.page(ctx, "alternatePaymentTypes", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return rawList{rows: rows, next: next}, nil
}

// GetAlternatePaymentType returns one of the restaurant's alternate payment types.
func (s *Server) GetAlternatePaymentType(ctx context.Context, req restaurantserver.GetAlternatePaymentTypeRequestObject) (restaurantserver.GetAlternatePaymentTypeResponseObject, error) {
	doc, err := s.get(ctx, "alternatePaymentTypes", req.Guid)
	if err != nil {
		return nil, err
	}
	return rawDoc(doc), nil
}

// ListBreakTypes lists the restaurant's break types.
func (s *Server) ListBreakTypes(ctx context.Context, req restaurantserver.ListBreakTypesRequestObject) (restaurantserver.ListBreakTypesResponseObject, error) {
	rows, next, err := s.page(ctx, "breakTypes", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return rawList{rows: rows, next: next}, nil
}

// GetBreakType returns one of the restaurant's break types.
func (s *Server) GetBreakType(ctx context.Context, req restaurantserver.GetBreakTypeRequestObject) (restaurantserver.GetBreakTypeResponseObject, error) {
	doc, err := s.get(ctx, "breakTypes", req.Guid)
	if err != nil {
		return nil, err
	}
	return rawDoc(doc), nil
}

// ListCashDrawers lists the restaurant's cash drawers.
func (s *Server) ListCashDrawers(ctx context.Context, req restaurantserver.ListCashDrawersRequestObject) (restaurantserver.ListCashDrawersResponseObject, error) {
	rows, next, err := s.page(ctx, "cashDrawers", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return rawList{rows: rows, next: next}, nil
}

// GetCashDrawer returns one of the restaurant's cash drawers.
func (s *Server) GetCashDrawer(ctx context.Context, req restaurantserver.GetCashDrawerRequestObject) (restaurantserver.GetCashDrawerResponseObject, error) {
	doc, err := s.get(ctx, "cashDrawers", req.Guid)
	if err != nil {
		return nil, err
	}
	return rawDoc(doc), nil
}

// ListDiningOptions lists the restaurant's dining options.
func (s *Server) ListDiningOptions(ctx context.Context, req restaurantserver.ListDiningOptionsRequestObject) (restaurantserver.ListDiningOptionsResponseObject, error) {
	rows, next, err := s.page(ctx, "diningOptions", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return rawList{rows: rows, next: next}, nil
}

// GetDiningOption returns one of the restaurant's dining options.
func (s *Server) GetDiningOption(ctx context.Context, req restaurantserver.GetDiningOptionRequestObject) (restaurantserver.GetDiningOptionResponseObject, error) {
	doc, err := s.get(ctx, "diningOptions", req.Guid)
	if err != nil {
		return nil, err
	}
	return rawDoc(doc), nil
}

// ListDiscounts lists the restaurant's discounts.
func (s *Server) ListDiscounts(ctx context.Context, req restaurantserver.ListDiscountsRequestObject) (restaurantserver.ListDiscountsResponseObject, error) {
	rows, next, err := s.page(ctx, "discounts", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return rawList{rows: rows, next: next}, nil
}

// GetDiscount returns one of the restaurant's discounts.
func (s *Server) GetDiscount(ctx context.Context, req restaurantserver.GetDiscountRequestObject) (restaurantserver.GetDiscountResponseObject, error) {
	doc, err := s.get(ctx, "discounts", req.Guid)
	if err != nil {
		return nil, err
	}
	return rawDoc(doc), nil
}

// ListMenuGroups lists the restaurant's menu groups.
func (s *Server) ListMenuGroups(ctx context.Context, req restaurantserver.ListMenuGroupsRequestObject) (restaurantserver.ListMenuGroupsResponseObject, error) {
	rows, next, err := s.page(ctx, "menuGroups", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return rawList{rows: rows, next: next}, nil
}

// GetMenuGroup returns one of the restaurant's menu groups.
func (s *Server) GetMenuGroup(ctx context.Context, req restaurantserver.GetMenuGroupRequestObject) (restaurantserver.GetMenuGroupResponseObject, error) {
	doc, err := s.get(ctx, "menuGroups", req.Guid)
	if err != nil {
		return nil, err
	}
	return rawDoc(doc), nil
}

// ListMenuItems lists the restaurant's menu items and modifiers.
func (s *Server) ListMenuItems(ctx context.Context, req restaurantserver.ListMenuItemsRequestObject) (restaurantserver.ListMenuItemsResponseObject, error) {
	rows, next, err := s.page(ctx, "menuItems", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return rawList{rows: rows, next: next}, nil
}

// GetMenuItem returns one of the restaurant's menu items and modifiers.
func (s *Server) GetMenuItem(ctx context.Context, req restaurantserver.GetMenuItemRequestObject) (restaurantserver.GetMenuItemResponseObject, error) {
	doc, err := s.get(ctx, "menuItems", req.Guid)
	if err != nil {
		return nil, err
	}
	return rawDoc(doc), nil
}

// ListMenuOptionGroups lists the restaurant's modifier groups.
func (s *Server) ListMenuOptionGroups(ctx context.Context, req restaurantserver.ListMenuOptionGroupsRequestObject) (restaurantserver.ListMenuOptionGroupsResponseObject, error) {
	rows, next, err := s.page(ctx, "menuOptionGroups", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return rawList{rows: rows, next: next}, nil
}

// GetMenuOptionGroup returns one of the restaurant's modifier groups.
func (s *Server) GetMenuOptionGroup(ctx context.Context, req restaurantserver.GetMenuOptionGroupRequestObject) (restaurantserver.GetMenuOptionGroupResponseObject, error) {
	doc, err := s.get(ctx, "menuOptionGroups", req.Guid)
	if err != nil {
		return nil, err
	}
	return rawDoc(doc), nil
}

// ListMenus lists the restaurant's menus.
func (s *Server) ListMenus(ctx context.Context, req restaurantserver.ListMenusRequestObject) (restaurantserver.ListMenusResponseObject, error) {
	rows, next, err := s.page(ctx, "menus", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return rawList{rows: rows, next: next}, nil
}

// GetMenu returns one of the restaurant's menus.
func (s *Server) GetMenu(ctx context.Context, req restaurantserver.GetMenuRequestObject) (restaurantserver.GetMenuResponseObject, error) {
	doc, err := s.get(ctx, "menus", req.Guid)
	if err != nil {
		return nil, err
	}
	return rawDoc(doc), nil
}

// ListNoSaleReasons lists the restaurant's no-sale reasons.
func (s *Server) ListNoSaleReasons(ctx context.Context, req restaurantserver.ListNoSaleReasonsRequestObject) (restaurantserver.ListNoSaleReasonsResponseObject, error) {
	rows, next, err := s.page(ctx, "noSaleReasons", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return rawList{rows: rows, next: next}, nil
}

// GetNoSaleReason returns one of the restaurant's no-sale reasons.
func (s *Server) GetNoSaleReason(ctx context.Context, req restaurantserver.GetNoSaleReasonRequestObject) (restaurantserver.GetNoSaleReasonResponseObject, error) {
	doc, err := s.get(ctx, "noSaleReasons", req.Guid)
	if err != nil {
		return nil, err
	}
	return rawDoc(doc), nil
}

// ListPayoutReasons lists the restaurant's payout reasons.
func (s *Server) ListPayoutReasons(ctx context.Context, req restaurantserver.ListPayoutReasonsRequestObject) (restaurantserver.ListPayoutReasonsResponseObject, error) {
	rows, next, err := s.page(ctx, "payoutReasons", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return rawList{rows: rows, next: next}, nil
}

// GetPayoutReason returns one of the restaurant's payout reasons.
func (s *Server) GetPayoutReason(ctx context.Context, req restaurantserver.GetPayoutReasonRequestObject) (restaurantserver.GetPayoutReasonResponseObject, error) {
	doc, err := s.get(ctx, "payoutReasons", req.Guid)
	if err != nil {
		return nil, err
	}
	return rawDoc(doc), nil
}

// ListPreModifiers lists the restaurant's pre-modifiers.
func (s *Server) ListPreModifiers(ctx context.Context, req restaurantserver.ListPreModifiersRequestObject) (restaurantserver.ListPreModifiersResponseObject, error) {
	rows, next, err := s.page(ctx, "preModifiers", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return rawList{rows: rows, next: next}, nil
}

// GetPreModifier returns one of the restaurant's pre-modifiers.
func (s *Server) GetPreModifier(ctx context.Context, req restaurantserver.GetPreModifierRequestObject) (restaurantserver.GetPreModifierResponseObject, error) {
	doc, err := s.get(ctx, "preModifiers", req.Guid)
	if err != nil {
		return nil, err
	}
	return rawDoc(doc), nil
}

// ListPreModifierGroups lists the restaurant's pre-modifier groups.
func (s *Server) ListPreModifierGroups(ctx context.Context, req restaurantserver.ListPreModifierGroupsRequestObject) (restaurantserver.ListPreModifierGroupsResponseObject, error) {
	rows, next, err := s.page(ctx, "preModifierGroups", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return rawList{rows: rows, next: next}, nil
}

// GetPreModifierGroup returns one of the restaurant's pre-modifier groups.
func (s *Server) GetPreModifierGroup(ctx context.Context, req restaurantserver.GetPreModifierGroupRequestObject) (restaurantserver.GetPreModifierGroupResponseObject, error) {
	doc, err := s.get(ctx, "preModifierGroups", req.Guid)
	if err != nil {
		return nil, err
	}
	return rawDoc(doc), nil
}

// ListPriceGroups lists the restaurant's price groups.
func (s *Server) ListPriceGroups(ctx context.Context, req restaurantserver.ListPriceGroupsRequestObject) (restaurantserver.ListPriceGroupsResponseObject, error) {
	rows, next, err := s.page(ctx, "priceGroups", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return rawList{rows: rows, next: next}, nil
}

// GetPriceGroup returns one of the restaurant's price groups.
func (s *Server) GetPriceGroup(ctx context.Context, req restaurantserver.GetPriceGroupRequestObject) (restaurantserver.GetPriceGroupResponseObject, error) {
	doc, err := s.get(ctx, "priceGroups", req.Guid)
	if err != nil {
		return nil, err
	}
	return rawDoc(doc), nil
}

// ListPrinters lists the restaurant's printers.
func (s *Server) ListPrinters(ctx context.Context, req restaurantserver.ListPrintersRequestObject) (restaurantserver.ListPrintersResponseObject, error) {
	rows, next, err := s.page(ctx, "printers", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return rawList{rows: rows, next: next}, nil
}

// GetPrinter returns one of the restaurant's printers.
func (s *Server) GetPrinter(ctx context.Context, req restaurantserver.GetPrinterRequestObject) (restaurantserver.GetPrinterResponseObject, error) {
	doc, err := s.get(ctx, "printers", req.Guid)
	if err != nil {
		return nil, err
	}
	return rawDoc(doc), nil
}

// ListRestaurantServices lists the restaurant's restaurant services.
func (s *Server) ListRestaurantServices(ctx context.Context, req restaurantserver.ListRestaurantServicesRequestObject) (restaurantserver.ListRestaurantServicesResponseObject, error) {
	rows, next, err := s.page(ctx, "restaurantServices", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return rawList{rows: rows, next: next}, nil
}

// GetRestaurantService returns one of the restaurant's restaurant services.
func (s *Server) GetRestaurantService(ctx context.Context, req restaurantserver.GetRestaurantServiceRequestObject) (restaurantserver.GetRestaurantServiceResponseObject, error) {
	doc, err := s.get(ctx, "restaurantServices", req.Guid)
	if err != nil {
		return nil, err
	}
	return rawDoc(doc), nil
}

// ListRevenueCenters lists the restaurant's revenue centers.
func (s *Server) ListRevenueCenters(ctx context.Context, req restaurantserver.ListRevenueCentersRequestObject) (restaurantserver.ListRevenueCentersResponseObject, error) {
	rows, next, err := s.page(ctx, "revenueCenters", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return rawList{rows: rows, next: next}, nil
}

// GetRevenueCenter returns one of the restaurant's revenue centers.
func (s *Server) GetRevenueCenter(ctx context.Context, req restaurantserver.GetRevenueCenterRequestObject) (restaurantserver.GetRevenueCenterResponseObject, error) {
	doc, err := s.get(ctx, "revenueCenters", req.Guid)
	if err != nil {
		return nil, err
	}
	return rawDoc(doc), nil
}

// ListSalesCategories lists the restaurant's sales categories.
func (s *Server) ListSalesCategories(ctx context.Context, req restaurantserver.ListSalesCategoriesRequestObject) (restaurantserver.ListSalesCategoriesResponseObject, error) {
	rows, next, err := s.page(ctx, "salesCategories", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return rawList{rows: rows, next: next}, nil
}

// GetSalesCategory returns one of the restaurant's sales categories.
func (s *Server) GetSalesCategory(ctx context.Context, req restaurantserver.GetSalesCategoryRequestObject) (restaurantserver.GetSalesCategoryResponseObject, error) {
	doc, err := s.get(ctx, "salesCategories", req.Guid)
	if err != nil {
		return nil, err
	}
	return rawDoc(doc), nil
}

// ListServiceAreas lists the restaurant's service areas.
func (s *Server) ListServiceAreas(ctx context.Context, req restaurantserver.ListServiceAreasRequestObject) (restaurantserver.ListServiceAreasResponseObject, error) {
	rows, next, err := s.page(ctx, "serviceAreas", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return rawList{rows: rows, next: next}, nil
}

// GetServiceArea returns one of the restaurant's service areas.
func (s *Server) GetServiceArea(ctx context.Context, req restaurantserver.GetServiceAreaRequestObject) (restaurantserver.GetServiceAreaResponseObject, error) {
	doc, err := s.get(ctx, "serviceAreas", req.Guid)
	if err != nil {
		return nil, err
	}
	return rawDoc(doc), nil
}

// ListServiceCharges lists the restaurant's service charges.
func (s *Server) ListServiceCharges(ctx context.Context, req restaurantserver.ListServiceChargesRequestObject) (restaurantserver.ListServiceChargesResponseObject, error) {
	rows, next, err := s.page(ctx, "serviceCharges", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return rawList{rows: rows, next: next}, nil
}

// GetServiceCharge returns one of the restaurant's service charges.
func (s *Server) GetServiceCharge(ctx context.Context, req restaurantserver.GetServiceChargeRequestObject) (restaurantserver.GetServiceChargeResponseObject, error) {
	doc, err := s.get(ctx, "serviceCharges", req.Guid)
	if err != nil {
		return nil, err
	}
	return rawDoc(doc), nil
}

// ListTables lists the restaurant's tables.
func (s *Server) ListTables(ctx context.Context, req restaurantserver.ListTablesRequestObject) (restaurantserver.ListTablesResponseObject, error) {
	rows, next, err := s.page(ctx, "tables", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return rawList{rows: rows, next: next}, nil
}

// GetTable returns one of the restaurant's tables.
func (s *Server) GetTable(ctx context.Context, req restaurantserver.GetTableRequestObject) (restaurantserver.GetTableResponseObject, error) {
	doc, err := s.get(ctx, "tables", req.Guid)
	if err != nil {
		return nil, err
	}
	return rawDoc(doc), nil
}

// ListTaxRates lists the restaurant's tax rates.
func (s *Server) ListTaxRates(ctx context.Context, req restaurantserver.ListTaxRatesRequestObject) (restaurantserver.ListTaxRatesResponseObject, error) {
	rows, next, err := s.page(ctx, "taxRates", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return rawList{rows: rows, next: next}, nil
}

// GetTaxRate returns one of the restaurant's tax rates.
func (s *Server) GetTaxRate(ctx context.Context, req restaurantserver.GetTaxRateRequestObject) (restaurantserver.GetTaxRateResponseObject, error) {
	doc, err := s.get(ctx, "taxRates", req.Guid)
	if err != nil {
		return nil, err
	}
	return rawDoc(doc), nil
}

// ListVoidReasons lists the restaurant's void reasons.
func (s *Server) ListVoidReasons(ctx context.Context, req restaurantserver.ListVoidReasonsRequestObject) (restaurantserver.ListVoidReasonsResponseObject, error) {
	rows, next, err := s.page(ctx, "voidReasons", listQuery(req.Params))
	if err != nil {
		return nil, err
	}
	return rawList{rows: rows, next: next}, nil
}

// GetVoidReason returns one of the restaurant's void reasons.
func (s *Server) GetVoidReason(ctx context.Context, req restaurantserver.GetVoidReasonRequestObject) (restaurantserver.GetVoidReasonResponseObject, error) {
	doc, err := s.get(ctx, "voidReasons", req.Guid)
	if err != nil {
		return nil, err
	}
	return rawDoc(doc), nil
}
