// Package clients holds what the four ergonomic clients share — the error
// interface (Error), the retry policy (RetryPolicy) and the error of retries
// that ran out (RetryError) — and, in this comment, the convention all four
// follow (clients/pam, clients/fax, clients/storage, clients/restaurant).
// The convention is a contract: a client that departs from it is a bug.
//
// # Importing
//
// A service imports only these packages and compiles no server code: the
// generated models and client (gen/<api>api) are separate from the generated
// server (gen/<api>server), and a test (TestImportable_*) keeps each client
// under 25 non-standard packages, none of echo, kin-openapi, gorilla/mux, a
// database driver, goose, PDF or UI code. clients/contract, the validating
// http.RoundTripper for tests, is a separate import: it compiles kin-openapi
// and reads the specs from package specs, no generated server. The clients'
// own tests import no server package either, since `go mod tidy` in an
// importing module records what they import too: the end-to-end tests live
// in e2e, and the runnable examples start their server in a
// process of its own (internal/examplestack).
//
// # Types
//
// Every parameter and result is the client's own type, with Go names for
// the wire fields (ID, GUID, URL), converted from the generated models at
// the edge; no generated type appears in a client's API but in API(). A
// test walks every method to keep it so.
//
// The types carry every field of the spec. One check, driven by the spec
// (clients/internal/shapetest), runs in each client's tests
// (TestOwnTypes_MatchTheSpec): every schema of the spec is either a type of
// the client or skipped with the reason (a request body built from a
// method's arguments, a page envelope an iterator unwraps); each property of
// a schema that has a type is a field of that type, under the spec's name
// (its json or xml tag, or a Go name that says it), of a compatible Go type,
// able to hold null where the spec allows null (or documented to hold it as
// the zero value); and each enumeration value is a constant of the field's
// type. A property, enumeration value or schema added to a spec and missing
// in the client fails `go test ./clients/<api>/`, naming it.
//
// # Construction
//
//	c, err := pam.New(pam.Config{BaseURL: …, Team: …, KeyID: …, KeySecret: …})
//
// Each package has New(Config) (*Client, error). Config is a struct passed by
// value: where the API is (BaseURL; storage: Endpoint, its S3 name), the
// credentials, Transport (the http.RoundTripper under the client's own
// layers; nil means http.DefaultTransport) and Retry (a RetryPolicy; the zero
// value is the documented default). New validates Config and does not
// contact the server; a token, where the API has one, is fetched by the first
// call and refreshed before it expires. A Client is safe for concurrent use.
//
// # Calls
//
// Every call takes a context.Context first; the context is the call's only
// overall bound (retries and their waits included). Names follow the
// operations of the spec, noun last:
//
//   - List<Plural>(ctx, [parent], opts *List<Plural>Options) iter.Seq2[<Noun>, error]
//     follows the pagination to the end, holding one page at a time; nil
//     opts means the defaults; iteration stops at the first error, which it
//     yields. (pam.ListGroups, fax.ListFaxes, restaurant.ListMenuItems)
//   - Get<Noun>(ctx, id) (*<Noun>, error)  (pam.GetGroup, fax.GetFax,
//     restaurant.GetMenuItem, storage.GetLifecycle)
//   - Create<Noun>(ctx, …) (*<Noun>, error); Update<Noun>(ctx, id, …);
//     Delete<Noun>(ctx, id) error; an action is <Verb><Noun> (fax.SendFax,
//     fax.CancelFax, pam.AddGroupMember).
//
// Results are returned by pointer (nil with an error); iterators yield
// values. Request parameters are a <Op>Params or <Op>Options struct: by
// value when the call needs it (fax.SendFaxParams), by pointer with nil
// meaning "defaults" when everything in it is optional (list options,
// pam.CreateServiceUserKeyOptions). Each client's API() returns the
// generated client, authenticated and retrying, for what the methods do not
// cover; every operation of the specs has a method.
//
// # Errors
//
// An error answer is the package's *Error, which implements Error: the HTTP
// status, the API's error code or name, the server's message, the request id
// where the API gives one, and whether the request may succeed if retried.
// Reach it with errors.As, either as the package's type or as clients.Error.
// Messages name the package and the operation once: "pam: get group: 404
// resource_does_not_exist: …". A connection failure is returned wrapped
// (%w), with the same prefix.
//
// # Retries
//
// The four clients retry the same way, in one shared construction
// (clients/internal/retry on hashicorp/go-retryablehttp): connection errors,
// attempts that exceeded RetryPolicy.AttemptTimeout, and 429, 500, 502, 503,
// 504 answers, up to RetryPolicy.MaxRetries retries. A server that says when
// to come back is obeyed — Retry-After on 429 and 503, X-RateLimit-Retry-At
// then X-RateLimit-Reset on 429 — up to RetryPolicy.MaxWait; otherwise the
// client backs off exponentially with full jitter. No wait is started that
// would end after the context's deadline. When retries stop without success
// the error is a *RetryError (attempts, why, the asked wait) wrapping the
// last answer's *Error. Non-idempotent creations (fax.SendFax,
// fax.CreateApplication) are never retried.
package clients
