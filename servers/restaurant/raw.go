package restaurant

// Configuration entities are stored as the JSON the import checked against
// the spec (store.go), so an answer writes the stored documents as they are:
// decoding each into its Go type only to encode it again cost two thirds of
// a list's CPU. rawList and rawDoc are the answers of every list and get
// operation; the strict server interface takes them because they implement
// each operation's response interface.

import (
	"net/http"
	"strconv"
)

// rawList is a page of a list: a JSON array of stored documents, and the
// token of the next page (nil on the last).
type rawList struct {
	rows []entityRow
	next *string
}

func (l rawList) write(w http.ResponseWriter) error {
	size := 3 // [ ] and the newline JSON encoders end with
	for _, r := range l.rows {
		size += len(r.Doc) + 1
	}
	body := make([]byte, 0, size)
	body = append(body, '[')
	for i, r := range l.rows {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, r.Doc...)
	}
	body = append(body, ']', '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if l.next != nil {
		h.Set("Platform-Next-Page-Token", *l.next)
	}
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(body)
	return err
}

// rawDoc is one stored document.
type rawDoc []byte

func (d rawDoc) write(w http.ResponseWriter) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(d)+1))
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(d); err != nil {
		return err
	}
	_, err := w.Write([]byte{'\n'})
	return err
}

// The response interfaces of the list operations.
func (l rawList) VisitListAlternatePaymentTypesResponse(w http.ResponseWriter) error {
	return l.write(w)
}

func (l rawList) VisitListBreakTypesResponse(w http.ResponseWriter) error { return l.write(w) }

func (l rawList) VisitListCashDrawersResponse(w http.ResponseWriter) error { return l.write(w) }

func (l rawList) VisitListDiningOptionsResponse(w http.ResponseWriter) error { return l.write(w) }

func (l rawList) VisitListDiscountsResponse(w http.ResponseWriter) error { return l.write(w) }

func (l rawList) VisitListMenuGroupsResponse(w http.ResponseWriter) error { return l.write(w) }

func (l rawList) VisitListMenuItemsResponse(w http.ResponseWriter) error { return l.write(w) }

func (l rawList) VisitListMenuOptionGroupsResponse(w http.ResponseWriter) error { return l.write(w) }

func (l rawList) VisitListMenusResponse(w http.ResponseWriter) error { return l.write(w) }

func (l rawList) VisitListNoSaleReasonsResponse(w http.ResponseWriter) error { return l.write(w) }

func (l rawList) VisitListPayoutReasonsResponse(w http.ResponseWriter) error { return l.write(w) }

func (l rawList) VisitListPreModifierGroupsResponse(w http.ResponseWriter) error { return l.write(w) }

func (l rawList) VisitListPreModifiersResponse(w http.ResponseWriter) error { return l.write(w) }

func (l rawList) VisitListPriceGroupsResponse(w http.ResponseWriter) error { return l.write(w) }

func (l rawList) VisitListPrintersResponse(w http.ResponseWriter) error { return l.write(w) }

func (l rawList) VisitListRestaurantServicesResponse(w http.ResponseWriter) error { return l.write(w) }

func (l rawList) VisitListRevenueCentersResponse(w http.ResponseWriter) error { return l.write(w) }

func (l rawList) VisitListSalesCategoriesResponse(w http.ResponseWriter) error { return l.write(w) }

func (l rawList) VisitListServiceAreasResponse(w http.ResponseWriter) error { return l.write(w) }

func (l rawList) VisitListServiceChargesResponse(w http.ResponseWriter) error { return l.write(w) }

func (l rawList) VisitListTablesResponse(w http.ResponseWriter) error { return l.write(w) }

func (l rawList) VisitListTaxRatesResponse(w http.ResponseWriter) error { return l.write(w) }

func (l rawList) VisitListVoidReasonsResponse(w http.ResponseWriter) error { return l.write(w) }

// The response interfaces of the get operations.
func (d rawDoc) VisitGetAlternatePaymentTypeResponse(w http.ResponseWriter) error { return d.write(w) }

func (d rawDoc) VisitGetBreakTypeResponse(w http.ResponseWriter) error { return d.write(w) }

func (d rawDoc) VisitGetCashDrawerResponse(w http.ResponseWriter) error { return d.write(w) }

func (d rawDoc) VisitGetDiningOptionResponse(w http.ResponseWriter) error { return d.write(w) }

func (d rawDoc) VisitGetDiscountResponse(w http.ResponseWriter) error { return d.write(w) }

func (d rawDoc) VisitGetMenuGroupResponse(w http.ResponseWriter) error { return d.write(w) }

func (d rawDoc) VisitGetMenuItemResponse(w http.ResponseWriter) error { return d.write(w) }

func (d rawDoc) VisitGetMenuOptionGroupResponse(w http.ResponseWriter) error { return d.write(w) }

func (d rawDoc) VisitGetMenuResponse(w http.ResponseWriter) error { return d.write(w) }

func (d rawDoc) VisitGetNoSaleReasonResponse(w http.ResponseWriter) error { return d.write(w) }

func (d rawDoc) VisitGetPayoutReasonResponse(w http.ResponseWriter) error { return d.write(w) }

func (d rawDoc) VisitGetPreModifierGroupResponse(w http.ResponseWriter) error { return d.write(w) }

func (d rawDoc) VisitGetPreModifierResponse(w http.ResponseWriter) error { return d.write(w) }

func (d rawDoc) VisitGetPriceGroupResponse(w http.ResponseWriter) error { return d.write(w) }

func (d rawDoc) VisitGetPrinterResponse(w http.ResponseWriter) error { return d.write(w) }

func (d rawDoc) VisitGetRestaurantServiceResponse(w http.ResponseWriter) error { return d.write(w) }

func (d rawDoc) VisitGetRevenueCenterResponse(w http.ResponseWriter) error { return d.write(w) }

func (d rawDoc) VisitGetSalesCategoryResponse(w http.ResponseWriter) error { return d.write(w) }

func (d rawDoc) VisitGetServiceAreaResponse(w http.ResponseWriter) error { return d.write(w) }

func (d rawDoc) VisitGetServiceChargeResponse(w http.ResponseWriter) error { return d.write(w) }

func (d rawDoc) VisitGetTableResponse(w http.ResponseWriter) error { return d.write(w) }

func (d rawDoc) VisitGetTaxRateResponse(w http.ResponseWriter) error { return d.write(w) }

func (d rawDoc) VisitGetTipWithholdingResponse(w http.ResponseWriter) error { return d.write(w) }

func (d rawDoc) VisitGetVoidReasonResponse(w http.ResponseWriter) error { return d.write(w) }
