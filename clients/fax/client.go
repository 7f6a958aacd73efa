package fax

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/apistack/apistack/clients"
	"github.com/apistack/apistack/clients/internal/retry"
	"github.com/apistack/apistack/gen/faxapi"
)

// Fax is a fax record: the wire fields under Go names (the client's own type,
// so the generator's naming is not this package's API).
type Fax struct {
	// ID identifies the fax.
	ID uuid.UUID `json:"id"`
	// RecordType is always RecordTypeFax.
	RecordType RecordType `json:"record_type"`
	// ConnectionID is the fax application it was sent or received on.
	ConnectionID string    `json:"connection_id"`
	Direction    Direction `json:"direction"`
	// From and To are E.164 numbers.
	From string `json:"from"`
	To   string `json:"to"`
	// Status is where the fax is in its life; FailureReason says why a
	// failed one failed.
	Status        Status         `json:"status"`
	FailureReason *FailureReason `json:"failure_reason,omitempty"`
	Quality       Quality        `json:"quality"`
	// PageCount, CallDurationSecs and PartialContent are known once the
	// transmission ran.
	PageCount        *int  `json:"page_count,omitempty"`
	CallDurationSecs *int  `json:"call_duration_secs,omitempty"`
	PartialContent   *bool `json:"partial_content,omitempty"`
	// MediaURL is the document (outbound: as given; inbound: a signed link).
	MediaURL *string `json:"media_url,omitempty"`
	// StoreMedia keeps a copy, linked (signed, 10 minutes) as StoredMediaURL.
	StoreMedia     bool    `json:"store_media"`
	StoredMediaURL *string `json:"stored_media_url,omitempty"`
	// WebhookURL and WebhookFailoverURL receive the fax's events.
	WebhookURL         string    `json:"webhook_url"`
	WebhookFailoverURL string    `json:"webhook_failover_url"`
	CreatedAt          time.Time `json:"created_at"`
	UpdatedAt          time.Time `json:"updated_at"`
}

// RecordType names the kind of record an answer holds.
type RecordType string

// The kinds of record.
const (
	RecordTypeFax            RecordType = "fax"
	RecordTypeFaxApplication RecordType = "fax_application"
)

// FailureReason says why a fax failed.
type FailureReason string

// The values of FailureReason.
const (
	FailureReasonDestinationUnreachable          FailureReason = "destination_unreachable"
	FailureReasonFaxSignalingError               FailureReason = "fax_signaling_error"
	FailureReasonFileDownloadFailed              FailureReason = "file_download_failed"
	FailureReasonFileFormatInvalid               FailureReason = "file_format_invalid"
	FailureReasonInvalidEcmResponseFromReceiver  FailureReason = "invalid_ecm_response_from_receiver"
	FailureReasonPageCountLimitExceeded          FailureReason = "page_count_limit_exceeded"
	FailureReasonReceiverCallDropped             FailureReason = "receiver_call_dropped"
	FailureReasonReceiverDecline                 FailureReason = "receiver_decline"
	FailureReasonReceiverIncompatibleDestination FailureReason = "receiver_incompatible_destination"
	FailureReasonReceiverNoAnswer                FailureReason = "receiver_no_answer"
	FailureReasonReceiverNoResponse              FailureReason = "receiver_no_response"
	FailureReasonReceiverUnallocatedNumber       FailureReason = "receiver_unallocated_number"
	FailureReasonSenderCallDropped               FailureReason = "sender_call_dropped"
	FailureReasonServiceUnavailable              FailureReason = "service_unavailable"
	FailureReasonUserBusy                        FailureReason = "user_busy"
	FailureReasonUserCancelled                   FailureReason = "user_cancelled"
)

// decodeFax reads the fax of a {"data": …} success answer.
func decodeFax(body []byte) (*Fax, error) {
	var env struct {
		Data Fax `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, fmt.Errorf("fax: decode answer: %w", err)
	}
	return &env.Data, nil
}

// Quality is a fax's fidelity setting.
type Quality string

// The values of Quality.
const (
	QualityHigh       Quality = "high"
	QualityNormal     Quality = "normal"
	QualityUltraDark  Quality = "ultra_dark"
	QualityUltraLight Quality = "ultra_light"
	QualityVeryHigh   Quality = "very_high"
)

// Status is a fax's state.
type Status string

// The values of Status.
const (
	StatusDelivered       Status = "delivered"
	StatusFailed          Status = "failed"
	StatusInitiated       Status = "initiated"
	StatusMediaProcessed  Status = "media.processed"
	StatusMediaProcessing Status = "media.processing"
	StatusOriginated      Status = "originated"
	StatusQueued          Status = "queued"
	StatusReceived        Status = "received"
	StatusReceiving       Status = "receiving"
	StatusSending         Status = "sending"
)

// Direction is outbound or inbound.
type Direction string

// The values of Direction.
const (
	DirectionInbound  Direction = "inbound"
	DirectionOutbound Direction = "outbound"
)

// Config says where the fax API is and which API key to use.
type Config struct {
	// BaseURL is the API's root, e.g. http://127.0.0.1:8082.
	BaseURL string
	// APIKey is the account's API key (version 2).
	APIKey string
	// Transport sends the requests (http.DefaultTransport when nil). Tests
	// put clients/contract's validating transport here.
	Transport http.RoundTripper
	// Retry is how idempotent calls are retried and how long one attempt may
	// take; the zero value is the documented default. Send is never retried
	// (a retry after a lost answer would send the fax twice) but has the same
	// per-attempt timeout. A call's overall bound is its context.
	Retry clients.RetryPolicy
}

// Client calls the fax API for one account. It is safe for concurrent use.
type Client struct {
	api  *faxapi.ClientWithResponses
	once *faxapi.ClientWithResponses
	http *http.Client // retrying, without the API key (media links)
}

// New returns a Client. It does not contact the server.
func New(cfg Config) (*Client, error) {
	if cfg.BaseURL == "" || cfg.APIKey == "" {
		return nil, errors.New("fax: Config needs BaseURL and APIKey")
	}
	next := cfg.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	auth := faxapi.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+cfg.APIKey)
		return nil
	})
	base := strings.TrimRight(cfg.BaseURL, "/")
	retrying := retry.HTTPClient(next, retry.Options{RetryPolicy: cfg.Retry})
	api, err := faxapi.NewClientWithResponses(base, faxapi.WithHTTPClient(retrying), auth)
	if err != nil {
		return nil, fmt.Errorf("fax: %w", err)
	}
	once, err := faxapi.NewClientWithResponses(base, faxapi.WithHTTPClient(retry.HTTPClient(next, retry.Options{RetryPolicy: clients.RetryPolicy{MaxRetries: -1, AttemptTimeout: cfg.Retry.AttemptTimeout}})), auth)
	if err != nil {
		return nil, fmt.Errorf("fax: %w", err)
	}
	return &Client{api: api, once: once, http: retrying}, nil
}

// API returns the generated client the methods are built on (authenticated
// and retrying), for operations this package does not wrap.
func (c *Client) API() *faxapi.ClientWithResponses { return c.api }

// SendFaxParams are the fields of a send.
type SendFaxParams struct {
	// ConnectionID is the fax application id.
	ConnectionID string
	// To and From are E.164 numbers; From must be enabled on the application.
	To, From string
	// MediaURL is the public http(s) URL of the PDF.
	MediaURL string
	// Quality defaults to normal.
	Quality Quality
	// StoreMedia keeps a copy, linked as StoredMediaUrl.
	StoreMedia bool
	// WebhookURL and WebhookFailoverURL override the application's.
	WebhookURL, WebhookFailoverURL string
}

// SendFax queues a fax, form-encoded as the service describes it, and returns
// the queued record. Progress arrives by webhook (NewWebhookHandler).
func (c *Client) SendFax(ctx context.Context, p SendFaxParams) (*Fax, error) {
	body := faxapi.SendFaxFormdataRequestBody{ConnectionId: p.ConnectionID, To: p.To, From: p.From, MediaUrl: p.MediaURL}
	if p.Quality != "" {
		q := faxapi.FaxQuality(p.Quality)
		body.Quality = &q
	}
	if p.StoreMedia {
		body.StoreMedia = &p.StoreMedia
	}
	if p.WebhookURL != "" {
		body.WebhookUrl = &p.WebhookURL
	}
	if p.WebhookFailoverURL != "" {
		body.WebhookFailoverUrl = &p.WebhookFailoverURL
	}
	resp, err := c.once.SendFaxWithFormdataBodyWithResponse(ctx, body)
	if err != nil {
		return nil, fmt.Errorf("fax: send: %w", err)
	}
	if resp.JSON202 == nil {
		return nil, fmt.Errorf("fax: send: %w", parseError(resp.HTTPResponse, resp.Body))
	}
	return decodeFax(resp.Body)
}

// GetFax returns a fax; its media links are fresh.
func (c *Client) GetFax(ctx context.Context, id string) (*Fax, error) {
	uid, err := uuid.Parse(id)
	if err != nil {
		return nil, fmt.Errorf("fax: get: id %q is not a UUID", id)
	}
	resp, err := c.api.GetFaxWithResponse(ctx, uid)
	if err != nil {
		return nil, fmt.Errorf("fax: get: %w", err)
	}
	if resp.JSON200 == nil {
		return nil, fmt.Errorf("fax: get: %w", parseError(resp.HTTPResponse, resp.Body))
	}
	return decodeFax(resp.Body)
}

// ListFaxesOptions filters and sizes a list of faxes.
type ListFaxesOptions struct {
	// PageSize is the number of faxes fetched per request (default 20).
	PageSize int
	// CreatedFrom and CreatedTo bound created_at (inclusive).
	CreatedFrom, CreatedTo *time.Time
	// Direction, From and To keep only the faxes matching them.
	Direction Direction
	From, To  string
}

// ListFaxes iterates over the account's faxes, newest first, fetching page after
// page; nil opts lists them all. It stops at the first error, which it yields.
func (c *Client) ListFaxes(ctx context.Context, opts *ListFaxesOptions) iter.Seq2[Fax, error] {
	if opts == nil {
		opts = &ListFaxesOptions{}
	}
	return func(yield func(Fax, error) bool) {
		params := faxapi.ListFaxesParams{FilterCreatedAtGte: opts.CreatedFrom, FilterCreatedAtLte: opts.CreatedTo}
		if opts.PageSize > 0 {
			params.PageSize = &opts.PageSize
		}
		if opts.Direction != "" {
			d := faxapi.FaxDirection(opts.Direction)
			params.FilterDirection = &d
		}
		if opts.From != "" {
			params.FilterFrom = &opts.From
		}
		if opts.To != "" {
			params.FilterTo = &opts.To
		}
		for page := 1; ; page++ {
			params.PageNumber = &page
			resp, err := c.api.ListFaxesWithResponse(ctx, &params)
			if err == nil && resp.JSON200 == nil {
				err = parseError(resp.HTTPResponse, resp.Body)
			}
			if err != nil {
				yield(Fax{}, fmt.Errorf("fax: list: %w", err))
				return
			}
			var faxes struct {
				Data []Fax `json:"data"`
			}
			if err := json.Unmarshal(resp.Body, &faxes); err != nil {
				yield(Fax{}, fmt.Errorf("fax: list: decode answer: %w", err))
				return
			}
			for _, f := range faxes.Data {
				if !yield(f, nil) {
					return
				}
			}
			if page >= resp.JSON200.Meta.TotalPages || len(resp.JSON200.Data) == 0 {
				return
			}
		}
	}
}

// DeleteFax deletes a fax in a final state; the service emits fax.deleted.
func (c *Client) DeleteFax(ctx context.Context, id string) error {
	uid, err := uuid.Parse(id)
	if err != nil {
		return fmt.Errorf("fax: delete: id %q is not a UUID", id)
	}
	resp, err := c.api.DeleteFaxWithResponse(ctx, uid)
	if err != nil {
		return fmt.Errorf("fax: delete: %w", err)
	}
	if resp.StatusCode() != http.StatusNoContent {
		return fmt.Errorf("fax: delete: %w", parseError(resp.HTTPResponse, resp.Body))
	}
	return nil
}

// CancelFax cancels an outbound fax still in progress; it fails with
// user_cancelled.
func (c *Client) CancelFax(ctx context.Context, id string) (*Fax, error) {
	uid, err := uuid.Parse(id)
	if err != nil {
		return nil, fmt.Errorf("fax: cancel: id %q is not a UUID", id)
	}
	resp, err := c.api.CancelFaxWithResponse(ctx, uid)
	if err != nil {
		return nil, fmt.Errorf("fax: cancel: %w", err)
	}
	if resp.JSON200 == nil {
		return nil, fmt.Errorf("fax: cancel: %w", parseError(resp.HTTPResponse, resp.Body))
	}
	return decodeFax(resp.Body)
}

// RefreshFax returns the fax with freshly signed media links (valid 10 minutes).
func (c *Client) RefreshFax(ctx context.Context, id string) (*Fax, error) {
	uid, err := uuid.Parse(id)
	if err != nil {
		return nil, fmt.Errorf("fax: refresh: id %q is not a UUID", id)
	}
	resp, err := c.api.RefreshFaxWithResponse(ctx, uid)
	if err != nil {
		return nil, fmt.Errorf("fax: refresh: %w", err)
	}
	if resp.JSON200 == nil {
		return nil, fmt.Errorf("fax: refresh: %w", parseError(resp.HTTPResponse, resp.Body))
	}
	return decodeFax(resp.Body)
}

// GetMedia downloads a fax document through a signed media link (a fax's
// StoredMediaUrl or an inbound fax's MediaUrl, valid 10 minutes; RefreshFax
// signs fresh ones). The link carries its own authorization, so it is sent
// without the API key; an altered or expired link answers an *Error with
// status 403.
func (c *Client) GetMedia(ctx context.Context, link string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
	if err != nil {
		return nil, fmt.Errorf("fax: get media: %w", err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fax: get media: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMediaBytes+1))
	if err != nil {
		return nil, fmt.Errorf("fax: get media: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fax: get media: %w", parseError(resp, body))
	}
	if len(body) > maxMediaBytes {
		return nil, fmt.Errorf("fax: get media: the document is larger than %d bytes", maxMediaBytes)
	}
	return body, nil
}

// maxMediaBytes caps a downloaded document.
const maxMediaBytes = 64 << 20

// ErrorItem is one entry of an error answer.
type ErrorItem struct {
	// Code is a stable machine-readable code, such as ErrorCodeInvalidParameter.
	Code ErrorCode
	// Title is a short summary of the code; Detail what went wrong in this
	// request.
	Title, Detail string
	// Source is where in the request, when the answer says.
	Source *ErrorSource
}

// ErrorCode is the machine-readable code of an error entry.
type ErrorCode string

// The error codes of the fax API.
const (
	ErrorCodeAuthenticationFailed ErrorCode = "authentication_failed"
	ErrorCodeForbidden            ErrorCode = "forbidden"
	ErrorCodeNotFound             ErrorCode = "not_found"
	ErrorCodeInvalidParameter     ErrorCode = "invalid_parameter"
	ErrorCodeInvalidState         ErrorCode = "invalid_state"
	ErrorCodeRequestTooLarge      ErrorCode = "request_too_large"
	ErrorCodeRequestTimeout       ErrorCode = "request_timeout"
	ErrorCodeServiceUnavailable   ErrorCode = "service_unavailable"
	ErrorCodeUnsupportedMediaType ErrorCode = "unsupported_media_type"
	ErrorCodeMethodNotAllowed     ErrorCode = "method_not_allowed"
	ErrorCodeInternalError        ErrorCode = "internal_error"
)

// ErrorSource is the part of a request an error entry is about.
type ErrorSource struct {
	// Parameter is the bad query or path parameter; Pointer a JSON pointer
	// to the bad body field ("/to").
	Parameter, Pointer *string
}

// Error is an error answer of the fax API. Use errors.As to get it from any
// error a method returns.
type Error struct {
	// StatusCode is the HTTP status (401, 404, 422, ...).
	StatusCode int
	// Items are the answer's errors; for a 422 each names its field in
	// Source.Pointer.
	Items []ErrorItem
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d", e.StatusCode)
	for _, it := range e.Items {
		fmt.Fprintf(&b, "; %s: %s", it.Code, it.Detail)
		if it.Source != nil && it.Source.Pointer != nil {
			fmt.Fprintf(&b, " (%s)", *it.Source.Pointer)
		}
	}
	return b.String()
}

var _ clients.Error = (*Error)(nil)

// HTTPStatus is the answer's status code (clients.Error).
func (e *Error) HTTPStatus() int { return e.StatusCode }

// ErrorCode is the first item's code, such as "10007" (clients.Error).
func (e *Error) ErrorCode() string {
	if len(e.Items) == 0 {
		return ""
	}
	return string(e.Items[0].Code)
}

// ErrorMessage is the first item's detail, or its title (clients.Error).
func (e *Error) ErrorMessage() string {
	if len(e.Items) == 0 {
		return ""
	}
	if e.Items[0].Detail != "" {
		return e.Items[0].Detail
	}
	return e.Items[0].Title
}

// ErrorRequestID is "": the fax API gives no request id (clients.Error).
func (e *Error) ErrorRequestID() string { return "" }

// Retryable is true for 429 and 5xx answers but 501 (clients.Error).
func (e *Error) Retryable() bool { return clients.RetryableStatus(e.StatusCode) }

// Pointers returns the source.pointer of every item (the bad body fields).
func (e *Error) Pointers() []string {
	var out []string
	for _, it := range e.Items {
		if it.Source != nil && it.Source.Pointer != nil {
			out = append(out, *it.Source.Pointer)
		}
	}
	return out
}

func parseError(resp *http.Response, body []byte) error {
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	var e faxapi.Errors
	if err := json.Unmarshal(body, &e); err != nil || len(e.Errors) == 0 {
		return retry.Wrap(resp, &Error{StatusCode: status, Items: []ErrorItem{{Code: ErrorCodeInternalError, Title: "Unexpected answer",
			Detail: fmt.Sprintf("unexpected answer %d: %.200s", status, body)}}})
	}
	items := make([]ErrorItem, len(e.Errors))
	for i, it := range e.Errors {
		items[i] = ErrorItem{Code: ErrorCode(it.Code), Title: it.Title, Detail: it.Detail}
		if it.Source != nil {
			items[i].Source = &ErrorSource{Parameter: it.Source.Parameter, Pointer: it.Source.Pointer}
		}
	}
	return retry.Wrap(resp, &Error{StatusCode: status, Items: items})
}
