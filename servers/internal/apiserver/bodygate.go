package apiserver

import (
	"net/http"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"
)

// bodyGate decides, before a byte of the body is read, whether the body may
// be read at all, and how much of it. kin-openapi reads the whole body into
// memory before it calls an operation's AuthenticationFunc, so an
// unauthenticated caller could otherwise make the server buffer and decode
// anything it sends.
type bodyGate struct {
	router       routers.Router
	authenticate openapi3filter.AuthenticationFunc
	limit        int64
	limits       map[string]int64
	// noteOperation records the route's operationId in the echo context
	// (operationKey), for the observer.
	noteOperation bool
}

// largest is the largest body any operation takes.
func (g *bodyGate) largest() int64 {
	largest := g.limit
	for _, l := range g.limits {
		largest = max(largest, l)
	}
	return largest
}

// middleware finds the request's operation and checks its security
// requirements with the API's AuthenticationFunc, which sees the request
// without its body (the API's Before middleware resolved the credentials
// from the headers). A caller that fails has the body dropped unread:
// the validation then refuses the request in the spec's order (no such
// operation, then authentication) without reading it, and the server closes
// the connection rather than drain a large body. A caller that passes, or an
// operation open to all, has its body refused unread when its Content-Length
// is over the operation's limit, and capped at that limit while it is read
// otherwise. A request with no operation is left to the validation, which
// refuses it without reading the body.
func (g *bodyGate) middleware(skip func(*http.Request) bool) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if skip != nil && skip(req) {
				return next(c)
			}
			hasBody := req.Body != nil && req.Body != http.NoBody
			route, pathParams, err := g.router.FindRoute(req)
			if g.noteOperation {
				op := ""
				if err == nil {
					op = route.Operation.OperationID
				}
				c.Set(operationKey, op)
			}
			if err != nil {
				dropBody(c)
				return next(c)
			}
			if !g.authenticated(req, route, pathParams) {
				dropBody(c)
				return next(c)
			}
			limit := g.limit
			if l, ok := g.limits[route.Operation.OperationID]; ok {
				limit = l
			}
			if req.ContentLength > limit {
				dropBody(c)
				return tooLargeFailure(limit, nil)
			}
			if hasBody {
				capped := req.WithContext(req.Context())
				capped.Body = http.MaxBytesReader(c.Response(), req.Body, limit)
				c.SetRequest(capped)
			}
			return next(c)
		}
	}
}

// sentBodyKey is the echo context key under which capBody, the first to see
// a request, records whether the caller sent a body (true).
const sentBodyKey = "apiserver.sentBody"

// dropBody makes the request bodiless for everything after it. The request
// the server holds keeps the body, so net/http still knows it was not read,
// and the answer closes the connection: the server neither reads the rest
// (net/http would otherwise read up to 256 KiB of it before answering, as long
// as the caller cares to take) nor parses it as the next request.
//
// A middleware in Before may have dropped the body already (storage's, which
// authenticates on its own): what the caller sent is judged by what capBody
// saw.
func dropBody(c echo.Context) {
	if sent, _ := c.Get(sentBodyKey).(bool); !sent {
		return
	}
	c.Response().Header().Set("Connection", "close")
	req := c.Request()
	dropped := req.WithContext(req.Context())
	dropped.Body, dropped.ContentLength, dropped.GetBody = http.NoBody, 0, nil
	c.SetRequest(dropped)
}

// authenticated reports whether the request meets one of its operation's
// security requirements (or the spec's, when the operation has none of its
// own), judged on its headers alone.
func (g *bodyGate) authenticated(req *http.Request, route *routers.Route, pathParams map[string]string) bool {
	security := route.Operation.Security
	if security == nil {
		security = &route.Spec.Security
	}
	if len(*security) == 0 {
		return true
	}
	if g.authenticate == nil {
		return false
	}
	headersOnly := req.WithContext(req.Context())
	headersOnly.Body, headersOnly.ContentLength, headersOnly.GetBody = http.NoBody, 0, nil
	err := openapi3filter.ValidateSecurityRequirements(req.Context(), &openapi3filter.RequestValidationInput{
		Request:    headersOnly,
		PathParams: pathParams,
		Route:      route,
		Options:    &openapi3filter.Options{AuthenticationFunc: g.authenticate},
	}, *security)
	return err == nil
}
