package pam

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// renderedPage is a page of a list as the API answers it: the JSON body,
// ending in a newline as the generated encoders write it, and the Link
// header value (nil when the page has no neighbour).
type renderedPage struct {
	body []byte
	link *string
}

// renderKey names a rendered page by everything its answer depends on: the
// list, the team, the filters, count, offset and the URL the caller used
// (the links are absolute).
func renderKey(ctx context.Context, list, teamID string, filters url.Values, count *int, offset *string) string {
	u := requestURL(ctx)
	k := list + "|" + teamID + "|" + filters.Encode() + "|" + u.Scheme + "://" + u.Host + u.Path + "|"
	if count != nil {
		k += strconv.Itoa(*count)
	}
	k += "|"
	if offset != nil {
		k += *offset
	}
	return k
}

// listGroupsAnswer is ListGroups's 200: a rendered page with the request's
// own rate-limit headers, written with its length and no further copy.
type listGroupsAnswer struct {
	page renderedPage
	rate rateHeaders
}

// VisitListGroupsResponse writes the answer.
func (a listGroupsAnswer) VisitListGroupsResponse(w http.ResponseWriter) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(a.page.body)))
	if a.page.link != nil {
		h.Set("Link", *a.page.link)
	}
	setRateHeadersOn(h, a.rate)
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(a.page.body)
	return err
}
