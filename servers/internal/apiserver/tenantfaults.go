package apiserver

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"
)

// FaultTaker is a Journal whose tenant sets can have faults (the
// sandboxes'): a request is offered to them once its credentials are known
// (Attribute), so a fault acts only on the requests of its own set.
type FaultTaker interface {
	// TakeFault returns the fault that takes the request of api made with
	// the credentials of set, or nil; operation names the request's
	// operationId (asked only when a fault needs it).
	TakeFault(ctx context.Context, api, set string, operation func() string) InjectedFault
}

// InjectedFault is a fault that took a request.
type InjectedFault interface {
	// Hold runs when the request is attributed (a slow fault waits there)
	// and reports whether the request is answered by Answer instead of
	// being served.
	Hold(ctx context.Context) bool
	// Drops reports whether Answer drops the connection, answering nothing.
	Drops() bool
	// Answer writes the fault's answer in place of the API's (or drops the
	// connection).
	Answer(c echo.Context) error
}

// takeFault offers the request of jc, just attributed to set, to the
// journal's faults, once per request.
func (jc *journalCapture) takeFault(ctx context.Context, set string) {
	if jc.taker == nil || jc.offered {
		return
	}
	jc.offered = true
	if f := jc.taker.TakeFault(ctx, jc.api, set, jc.operation); f != nil && f.Hold(ctx) {
		jc.fault, jc.muted = f, true
	}
}

// skipFaulted stops a request a fault took from going further (its
// operation does not run): the journal middleware writes the fault's answer.
func skipFaulted(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if jc, _ := c.Request().Context().Value(journalKey{}).(*journalCapture); jc != nil && jc.fault != nil {
			return nil
		}
		return next(c)
	}
}

// answerFault replaces whatever the API answered to the request a fault
// took (nothing was sent: the journal's writer held it back) with the
// fault's answer. A fault that drops the connection is left to
// dropFaulted, once the request is journaled (status 0): its caller sees
// the connection close only after that, as every other caller sees its
// response end only after its request is journaled.
func answerFault(c echo.Context, jc *journalCapture) {
	resp := c.Response()
	h := resp.Header()
	for k := range h {
		delete(h, k)
	}
	resp.Committed, resp.Status, resp.Size = false, http.StatusOK, 0
	jc.muted = false
	if jc.fault.Drops() {
		jc.unanswered = true
		return
	}
	if err := jc.fault.Answer(c); err != nil {
		c.Logger().Error(err)
	}
	jc.unanswered = !resp.Committed
}

// dropFaulted drops the connection of a request a dropping fault took.
func dropFaulted(c echo.Context, jc *journalCapture) {
	if jc.fault == nil || !jc.fault.Drops() {
		return
	}
	if err := jc.fault.Answer(c); err != nil {
		c.Logger().Error(err)
	}
}

// status is the status the journal records: 0 for a request a fault
// answered nothing (a dropped connection).
func (jc *journalCapture) status(c echo.Context) int {
	if jc.unanswered {
		return 0
	}
	return answeredStatus(c)
}

// Delivery is what the transport of a webhook delivery learns of it from
// the request's context (WithDelivery): the attempt, and whose credentials'
// tenant set the event belongs to, so that the set's webhook faults act on
// it (servers/sandbox).
type Delivery struct {
	// Attempt is the delivery attempt, 1 for the first.
	Attempt int
	// Set looks the tenant set of the event up.
	Set func(ctx context.Context) (string, error)
}

type deliveryKey struct{}

// WithDelivery returns ctx carrying d, for the transport of the request
// that delivers it.
func WithDelivery(ctx context.Context, d Delivery) context.Context {
	return context.WithValue(ctx, deliveryKey{}, d)
}

// DeliveryOf returns the Delivery ctx carries.
func DeliveryOf(ctx context.Context) (Delivery, bool) {
	d, ok := ctx.Value(deliveryKey{}).(Delivery)
	return d, ok && d.Set != nil
}
