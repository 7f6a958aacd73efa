package restaurant_test

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/apistack/apistack/gen/restaurantapi"
)

// operation drives one resource's list and get operations through the
// generated client and returns what they answered, re-encoded as JSON so the
// test compares them with the imported document.
type operation struct {
	resource string
	list     func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant string, p listParams) (int, http.Header, []json.RawMessage, error)
	get      func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant, guid string) (int, json.RawMessage, error)
}

// listParams has the fields of every generated List...Params type but the header.
type listParams struct {
	PageToken    *string
	PageSize     *int
	Page         *int
	LastModified *string
}

func reencode[T any](v *[]T) []json.RawMessage {
	if v == nil {
		return nil
	}
	out := make([]json.RawMessage, 0, len(*v))
	for _, x := range *v {
		b, _ := json.Marshal(x)
		out = append(out, b)
	}
	return out
}

func reencodeOne[T any](v *T) json.RawMessage {
	if v == nil {
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}

// operations covers every list and get operation of the spec.
var operations = []operation{
	{
		resource: "alternatePaymentTypes",
		list: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant string, p listParams) (int, http.Header, []json.RawMessage, error) {
			r, err := c.ListAlternatePaymentTypesWithResponse(ctx, &restaurantapi.ListAlternatePaymentTypesParams{PlatformRestaurantExternalID: restaurant,
				PageToken: p.PageToken, PageSize: p.PageSize, Page: p.Page, LastModified: p.LastModified})
			if err != nil {
				return 0, nil, nil, err
			}
			return r.StatusCode(), r.HTTPResponse.Header, reencode(r.JSON200), nil
		},
		get: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant, guid string) (int, json.RawMessage, error) {
			r, err := c.GetAlternatePaymentTypeWithResponse(ctx, guid, &restaurantapi.GetAlternatePaymentTypeParams{PlatformRestaurantExternalID: restaurant})
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), reencodeOne(r.JSON200), nil
		},
	},
	{
		resource: "breakTypes",
		list: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant string, p listParams) (int, http.Header, []json.RawMessage, error) {
			r, err := c.ListBreakTypesWithResponse(ctx, &restaurantapi.ListBreakTypesParams{PlatformRestaurantExternalID: restaurant,
				PageToken: p.PageToken, PageSize: p.PageSize, Page: p.Page, LastModified: p.LastModified})
			if err != nil {
				return 0, nil, nil, err
			}
			return r.StatusCode(), r.HTTPResponse.Header, reencode(r.JSON200), nil
		},
		get: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant, guid string) (int, json.RawMessage, error) {
			r, err := c.GetBreakTypeWithResponse(ctx, guid, &restaurantapi.GetBreakTypeParams{PlatformRestaurantExternalID: restaurant})
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), reencodeOne(r.JSON200), nil
		},
	},
	{
		resource: "cashDrawers",
		list: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant string, p listParams) (int, http.Header, []json.RawMessage, error) {
			r, err := c.ListCashDrawersWithResponse(ctx, &restaurantapi.ListCashDrawersParams{PlatformRestaurantExternalID: restaurant,
				PageToken: p.PageToken, PageSize: p.PageSize, Page: p.Page, LastModified: p.LastModified})
			if err != nil {
				return 0, nil, nil, err
			}
			return r.StatusCode(), r.HTTPResponse.Header, reencode(r.JSON200), nil
		},
		get: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant, guid string) (int, json.RawMessage, error) {
			r, err := c.GetCashDrawerWithResponse(ctx, guid, &restaurantapi.GetCashDrawerParams{PlatformRestaurantExternalID: restaurant})
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), reencodeOne(r.JSON200), nil
		},
	},
	{
		resource: "diningOptions",
		list: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant string, p listParams) (int, http.Header, []json.RawMessage, error) {
			r, err := c.ListDiningOptionsWithResponse(ctx, &restaurantapi.ListDiningOptionsParams{PlatformRestaurantExternalID: restaurant,
				PageToken: p.PageToken, PageSize: p.PageSize, Page: p.Page, LastModified: p.LastModified})
			if err != nil {
				return 0, nil, nil, err
			}
			return r.StatusCode(), r.HTTPResponse.Header, reencode(r.JSON200), nil
		},
		get: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant, guid string) (int, json.RawMessage, error) {
			r, err := c.GetDiningOptionWithResponse(ctx, guid, &restaurantapi.GetDiningOptionParams{PlatformRestaurantExternalID: restaurant})
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), reencodeOne(r.JSON200), nil
		},
	},
	{
		resource: "discounts",
		list: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant string, p listParams) (int, http.Header, []json.RawMessage, error) {
			r, err := c.ListDiscountsWithResponse(ctx, &restaurantapi.ListDiscountsParams{PlatformRestaurantExternalID: restaurant,
				PageToken: p.PageToken, PageSize: p.PageSize, Page: p.Page, LastModified: p.LastModified})
			if err != nil {
				return 0, nil, nil, err
			}
			return r.StatusCode(), r.HTTPResponse.Header, reencode(r.JSON200), nil
		},
		get: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant, guid string) (int, json.RawMessage, error) {
			r, err := c.GetDiscountWithResponse(ctx, guid, &restaurantapi.GetDiscountParams{PlatformRestaurantExternalID: restaurant})
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), reencodeOne(r.JSON200), nil
		},
	},
	{
		resource: "menuGroups",
		list: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant string, p listParams) (int, http.Header, []json.RawMessage, error) {
			r, err := c.ListMenuGroupsWithResponse(ctx, &restaurantapi.ListMenuGroupsParams{PlatformRestaurantExternalID: restaurant,
				PageToken: p.PageToken, PageSize: p.PageSize, Page: p.Page, LastModified: p.LastModified})
			if err != nil {
				return 0, nil, nil, err
			}
			return r.StatusCode(), r.HTTPResponse.Header, reencode(r.JSON200), nil
		},
		get: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant, guid string) (int, json.RawMessage, error) {
			r, err := c.GetMenuGroupWithResponse(ctx, guid, &restaurantapi.GetMenuGroupParams{PlatformRestaurantExternalID: restaurant})
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), reencodeOne(r.JSON200), nil
		},
	},
	{
		resource: "menuItems",
		list: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant string, p listParams) (int, http.Header, []json.RawMessage, error) {
			r, err := c.ListMenuItemsWithResponse(ctx, &restaurantapi.ListMenuItemsParams{PlatformRestaurantExternalID: restaurant,
				PageToken: p.PageToken, PageSize: p.PageSize, Page: p.Page, LastModified: p.LastModified})
			if err != nil {
				return 0, nil, nil, err
			}
			return r.StatusCode(), r.HTTPResponse.Header, reencode(r.JSON200), nil
		},
		get: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant, guid string) (int, json.RawMessage, error) {
			r, err := c.GetMenuItemWithResponse(ctx, guid, &restaurantapi.GetMenuItemParams{PlatformRestaurantExternalID: restaurant})
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), reencodeOne(r.JSON200), nil
		},
	},
	{
		resource: "menuOptionGroups",
		list: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant string, p listParams) (int, http.Header, []json.RawMessage, error) {
			r, err := c.ListMenuOptionGroupsWithResponse(ctx, &restaurantapi.ListMenuOptionGroupsParams{PlatformRestaurantExternalID: restaurant,
				PageToken: p.PageToken, PageSize: p.PageSize, Page: p.Page, LastModified: p.LastModified})
			if err != nil {
				return 0, nil, nil, err
			}
			return r.StatusCode(), r.HTTPResponse.Header, reencode(r.JSON200), nil
		},
		get: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant, guid string) (int, json.RawMessage, error) {
			r, err := c.GetMenuOptionGroupWithResponse(ctx, guid, &restaurantapi.GetMenuOptionGroupParams{PlatformRestaurantExternalID: restaurant})
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), reencodeOne(r.JSON200), nil
		},
	},
	{
		resource: "menus",
		list: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant string, p listParams) (int, http.Header, []json.RawMessage, error) {
			r, err := c.ListMenusWithResponse(ctx, &restaurantapi.ListMenusParams{PlatformRestaurantExternalID: restaurant,
				PageToken: p.PageToken, PageSize: p.PageSize, Page: p.Page, LastModified: p.LastModified})
			if err != nil {
				return 0, nil, nil, err
			}
			return r.StatusCode(), r.HTTPResponse.Header, reencode(r.JSON200), nil
		},
		get: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant, guid string) (int, json.RawMessage, error) {
			r, err := c.GetMenuWithResponse(ctx, guid, &restaurantapi.GetMenuParams{PlatformRestaurantExternalID: restaurant})
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), reencodeOne(r.JSON200), nil
		},
	},
	{
		resource: "noSaleReasons",
		list: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant string, p listParams) (int, http.Header, []json.RawMessage, error) {
			r, err := c.ListNoSaleReasonsWithResponse(ctx, &restaurantapi.ListNoSaleReasonsParams{PlatformRestaurantExternalID: restaurant,
				PageToken: p.PageToken, PageSize: p.PageSize, Page: p.Page, LastModified: p.LastModified})
			if err != nil {
				return 0, nil, nil, err
			}
			return r.StatusCode(), r.HTTPResponse.Header, reencode(r.JSON200), nil
		},
		get: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant, guid string) (int, json.RawMessage, error) {
			r, err := c.GetNoSaleReasonWithResponse(ctx, guid, &restaurantapi.GetNoSaleReasonParams{PlatformRestaurantExternalID: restaurant})
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), reencodeOne(r.JSON200), nil
		},
	},
	{
		resource: "payoutReasons",
		list: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant string, p listParams) (int, http.Header, []json.RawMessage, error) {
			r, err := c.ListPayoutReasonsWithResponse(ctx, &restaurantapi.ListPayoutReasonsParams{PlatformRestaurantExternalID: restaurant,
				PageToken: p.PageToken, PageSize: p.PageSize, Page: p.Page, LastModified: p.LastModified})
			if err != nil {
				return 0, nil, nil, err
			}
			return r.StatusCode(), r.HTTPResponse.Header, reencode(r.JSON200), nil
		},
		get: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant, guid string) (int, json.RawMessage, error) {
			r, err := c.GetPayoutReasonWithResponse(ctx, guid, &restaurantapi.GetPayoutReasonParams{PlatformRestaurantExternalID: restaurant})
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), reencodeOne(r.JSON200), nil
		},
	},
	{
		resource: "preModifiers",
		list: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant string, p listParams) (int, http.Header, []json.RawMessage, error) {
			r, err := c.ListPreModifiersWithResponse(ctx, &restaurantapi.ListPreModifiersParams{PlatformRestaurantExternalID: restaurant,
				PageToken: p.PageToken, PageSize: p.PageSize, Page: p.Page, LastModified: p.LastModified})
			if err != nil {
				return 0, nil, nil, err
			}
			return r.StatusCode(), r.HTTPResponse.Header, reencode(r.JSON200), nil
		},
		get: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant, guid string) (int, json.RawMessage, error) {
			r, err := c.GetPreModifierWithResponse(ctx, guid, &restaurantapi.GetPreModifierParams{PlatformRestaurantExternalID: restaurant})
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), reencodeOne(r.JSON200), nil
		},
	},
	{
		resource: "preModifierGroups",
		list: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant string, p listParams) (int, http.Header, []json.RawMessage, error) {
			r, err := c.ListPreModifierGroupsWithResponse(ctx, &restaurantapi.ListPreModifierGroupsParams{PlatformRestaurantExternalID: restaurant,
				PageToken: p.PageToken, PageSize: p.PageSize, Page: p.Page, LastModified: p.LastModified})
			if err != nil {
				return 0, nil, nil, err
			}
			return r.StatusCode(), r.HTTPResponse.Header, reencode(r.JSON200), nil
		},
		get: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant, guid string) (int, json.RawMessage, error) {
			r, err := c.GetPreModifierGroupWithResponse(ctx, guid, &restaurantapi.GetPreModifierGroupParams{PlatformRestaurantExternalID: restaurant})
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), reencodeOne(r.JSON200), nil
		},
	},
	{
		resource: "priceGroups",
		list: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant string, p listParams) (int, http.Header, []json.RawMessage, error) {
			r, err := c.ListPriceGroupsWithResponse(ctx, &restaurantapi.ListPriceGroupsParams{PlatformRestaurantExternalID: restaurant,
				PageToken: p.PageToken, PageSize: p.PageSize, Page: p.Page, LastModified: p.LastModified})
			if err != nil {
				return 0, nil, nil, err
			}
			return r.StatusCode(), r.HTTPResponse.Header, reencode(r.JSON200), nil
		},
		get: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant, guid string) (int, json.RawMessage, error) {
			r, err := c.GetPriceGroupWithResponse(ctx, guid, &restaurantapi.GetPriceGroupParams{PlatformRestaurantExternalID: restaurant})
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), reencodeOne(r.JSON200), nil
		},
	},
	{
		resource: "printers",
		list: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant string, p listParams) (int, http.Header, []json.RawMessage, error) {
			r, err := c.ListPrintersWithResponse(ctx, &restaurantapi.ListPrintersParams{PlatformRestaurantExternalID: restaurant,
				PageToken: p.PageToken, PageSize: p.PageSize, Page: p.Page, LastModified: p.LastModified})
			if err != nil {
				return 0, nil, nil, err
			}
			return r.StatusCode(), r.HTTPResponse.Header, reencode(r.JSON200), nil
		},
		get: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant, guid string) (int, json.RawMessage, error) {
			r, err := c.GetPrinterWithResponse(ctx, guid, &restaurantapi.GetPrinterParams{PlatformRestaurantExternalID: restaurant})
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), reencodeOne(r.JSON200), nil
		},
	},
	{
		resource: "restaurantServices",
		list: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant string, p listParams) (int, http.Header, []json.RawMessage, error) {
			r, err := c.ListRestaurantServicesWithResponse(ctx, &restaurantapi.ListRestaurantServicesParams{PlatformRestaurantExternalID: restaurant,
				PageToken: p.PageToken, PageSize: p.PageSize, Page: p.Page, LastModified: p.LastModified})
			if err != nil {
				return 0, nil, nil, err
			}
			return r.StatusCode(), r.HTTPResponse.Header, reencode(r.JSON200), nil
		},
		get: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant, guid string) (int, json.RawMessage, error) {
			r, err := c.GetRestaurantServiceWithResponse(ctx, guid, &restaurantapi.GetRestaurantServiceParams{PlatformRestaurantExternalID: restaurant})
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), reencodeOne(r.JSON200), nil
		},
	},
	{
		resource: "revenueCenters",
		list: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant string, p listParams) (int, http.Header, []json.RawMessage, error) {
			r, err := c.ListRevenueCentersWithResponse(ctx, &restaurantapi.ListRevenueCentersParams{PlatformRestaurantExternalID: restaurant,
				PageToken: p.PageToken, PageSize: p.PageSize, Page: p.Page, LastModified: p.LastModified})
			if err != nil {
				return 0, nil, nil, err
			}
			return r.StatusCode(), r.HTTPResponse.Header, reencode(r.JSON200), nil
		},
		get: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant, guid string) (int, json.RawMessage, error) {
			r, err := c.GetRevenueCenterWithResponse(ctx, guid, &restaurantapi.GetRevenueCenterParams{PlatformRestaurantExternalID: restaurant})
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), reencodeOne(r.JSON200), nil
		},
	},
	{
		resource: "salesCategories",
		list: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant string, p listParams) (int, http.Header, []json.RawMessage, error) {
			r, err := c.ListSalesCategoriesWithResponse(ctx, &restaurantapi.ListSalesCategoriesParams{PlatformRestaurantExternalID: restaurant,
				PageToken: p.PageToken, PageSize: p.PageSize, Page: p.Page, LastModified: p.LastModified})
			if err != nil {
				return 0, nil, nil, err
			}
			return r.StatusCode(), r.HTTPResponse.Header, reencode(r.JSON200), nil
		},
		get: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant, guid string) (int, json.RawMessage, error) {
			r, err := c.GetSalesCategoryWithResponse(ctx, guid, &restaurantapi.GetSalesCategoryParams{PlatformRestaurantExternalID: restaurant})
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), reencodeOne(r.JSON200), nil
		},
	},
	{
		resource: "serviceAreas",
		list: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant string, p listParams) (int, http.Header, []json.RawMessage, error) {
			r, err := c.ListServiceAreasWithResponse(ctx, &restaurantapi.ListServiceAreasParams{PlatformRestaurantExternalID: restaurant,
				PageToken: p.PageToken, PageSize: p.PageSize, Page: p.Page, LastModified: p.LastModified})
			if err != nil {
				return 0, nil, nil, err
			}
			return r.StatusCode(), r.HTTPResponse.Header, reencode(r.JSON200), nil
		},
		get: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant, guid string) (int, json.RawMessage, error) {
			r, err := c.GetServiceAreaWithResponse(ctx, guid, &restaurantapi.GetServiceAreaParams{PlatformRestaurantExternalID: restaurant})
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), reencodeOne(r.JSON200), nil
		},
	},
	{
		resource: "serviceCharges",
		list: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant string, p listParams) (int, http.Header, []json.RawMessage, error) {
			r, err := c.ListServiceChargesWithResponse(ctx, &restaurantapi.ListServiceChargesParams{PlatformRestaurantExternalID: restaurant,
				PageToken: p.PageToken, PageSize: p.PageSize, Page: p.Page, LastModified: p.LastModified})
			if err != nil {
				return 0, nil, nil, err
			}
			return r.StatusCode(), r.HTTPResponse.Header, reencode(r.JSON200), nil
		},
		get: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant, guid string) (int, json.RawMessage, error) {
			r, err := c.GetServiceChargeWithResponse(ctx, guid, &restaurantapi.GetServiceChargeParams{PlatformRestaurantExternalID: restaurant})
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), reencodeOne(r.JSON200), nil
		},
	},
	{
		resource: "tables",
		list: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant string, p listParams) (int, http.Header, []json.RawMessage, error) {
			r, err := c.ListTablesWithResponse(ctx, &restaurantapi.ListTablesParams{PlatformRestaurantExternalID: restaurant,
				PageToken: p.PageToken, PageSize: p.PageSize, Page: p.Page, LastModified: p.LastModified})
			if err != nil {
				return 0, nil, nil, err
			}
			return r.StatusCode(), r.HTTPResponse.Header, reencode(r.JSON200), nil
		},
		get: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant, guid string) (int, json.RawMessage, error) {
			r, err := c.GetTableWithResponse(ctx, guid, &restaurantapi.GetTableParams{PlatformRestaurantExternalID: restaurant})
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), reencodeOne(r.JSON200), nil
		},
	},
	{
		resource: "taxRates",
		list: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant string, p listParams) (int, http.Header, []json.RawMessage, error) {
			r, err := c.ListTaxRatesWithResponse(ctx, &restaurantapi.ListTaxRatesParams{PlatformRestaurantExternalID: restaurant,
				PageToken: p.PageToken, PageSize: p.PageSize, Page: p.Page, LastModified: p.LastModified})
			if err != nil {
				return 0, nil, nil, err
			}
			return r.StatusCode(), r.HTTPResponse.Header, reencode(r.JSON200), nil
		},
		get: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant, guid string) (int, json.RawMessage, error) {
			r, err := c.GetTaxRateWithResponse(ctx, guid, &restaurantapi.GetTaxRateParams{PlatformRestaurantExternalID: restaurant})
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), reencodeOne(r.JSON200), nil
		},
	},
	{
		resource: "voidReasons",
		list: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant string, p listParams) (int, http.Header, []json.RawMessage, error) {
			r, err := c.ListVoidReasonsWithResponse(ctx, &restaurantapi.ListVoidReasonsParams{PlatformRestaurantExternalID: restaurant,
				PageToken: p.PageToken, PageSize: p.PageSize, Page: p.Page, LastModified: p.LastModified})
			if err != nil {
				return 0, nil, nil, err
			}
			return r.StatusCode(), r.HTTPResponse.Header, reencode(r.JSON200), nil
		},
		get: func(ctx context.Context, c *restaurantapi.ClientWithResponses, restaurant, guid string) (int, json.RawMessage, error) {
			r, err := c.GetVoidReasonWithResponse(ctx, guid, &restaurantapi.GetVoidReasonParams{PlatformRestaurantExternalID: restaurant})
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), reencodeOne(r.JSON200), nil
		},
	},
}
