package fax

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"time"

	"github.com/apistack/apistack/gen/faxapi"
)

// Application is a fax application: the connection a fax is sent on
// (SendFaxParams.ConnectionID is its ID) and where its webhooks go.
type Application struct {
	// ID is the application's id, the connection_id of sends.
	ID string
	// RecordType is always RecordTypeFaxApplication.
	RecordType RecordType
	// Name is the application's name.
	Name string
	// WebhookURL receives the events of the application's faxes;
	// WebhookFailoverURL, when not empty, receives them when it fails.
	WebhookURL, WebhookFailoverURL string
	// OutboundVoiceProfileID is needed to send; "" when the application
	// only receives (null on the wire).
	OutboundVoiceProfileID string
	// CreatedAt and UpdatedAt are when it was created and last changed.
	CreatedAt, UpdatedAt time.Time
}

func applicationFrom(a faxapi.FaxApplication) Application {
	out := Application{ID: a.Id, RecordType: RecordType(a.RecordType), Name: a.ApplicationName, WebhookURL: a.WebhookUrl, WebhookFailoverURL: a.WebhookFailoverUrl,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
	if a.OutboundVoiceProfileId != nil {
		out.OutboundVoiceProfileID = *a.OutboundVoiceProfileId
	}
	return out
}

// ListApplicationsOptions sizes a list of applications.
type ListApplicationsOptions struct {
	// PageSize is the number of applications fetched per request (default 20).
	PageSize int
}

// ListApplications iterates over the account's fax applications, fetching
// page after page; nil opts lists them all. It stops at the first error,
// which it yields.
func (c *Client) ListApplications(ctx context.Context, opts *ListApplicationsOptions) iter.Seq2[Application, error] {
	return func(yield func(Application, error) bool) {
		var params faxapi.ListFaxApplicationsParams
		if opts != nil && opts.PageSize > 0 {
			params.PageSize = &opts.PageSize
		}
		for page := 1; ; page++ {
			params.PageNumber = &page
			resp, err := c.api.ListFaxApplicationsWithResponse(ctx, &params)
			if err == nil && resp.JSON200 == nil {
				err = parseError(resp.HTTPResponse, resp.Body)
			}
			if err != nil {
				yield(Application{}, fmt.Errorf("fax: list applications: %w", err))
				return
			}
			for _, a := range resp.JSON200.Data {
				if !yield(applicationFrom(a), nil) {
					return
				}
			}
			if page >= resp.JSON200.Meta.TotalPages || len(resp.JSON200.Data) == 0 {
				return
			}
		}
	}
}

// CreateApplicationParams are the fields of a new application.
type CreateApplicationParams struct {
	// Name and WebhookURL are required.
	Name, WebhookURL string
	// WebhookFailoverURL and OutboundVoiceProfileID are optional.
	WebhookFailoverURL, OutboundVoiceProfileID string
}

// CreateApplication creates a fax application. It is not retried: a retry
// after a lost answer would create a second one.
func (c *Client) CreateApplication(ctx context.Context, p CreateApplicationParams) (*Application, error) {
	body := faxapi.CreateFaxApplicationJSONRequestBody{ApplicationName: p.Name, WebhookUrl: p.WebhookURL}
	if p.WebhookFailoverURL != "" {
		body.WebhookFailoverUrl = &p.WebhookFailoverURL
	}
	if p.OutboundVoiceProfileID != "" {
		body.OutboundVoiceProfileId = &p.OutboundVoiceProfileID
	}
	resp, err := c.once.CreateFaxApplicationWithResponse(ctx, body)
	if err != nil {
		return nil, fmt.Errorf("fax: create application: %w", err)
	}
	if resp.JSON201 == nil {
		return nil, fmt.Errorf("fax: create application: %w", parseError(resp.HTTPResponse, resp.Body))
	}
	a := applicationFrom(resp.JSON201.Data)
	return &a, nil
}

// GetApplication returns a fax application by id.
func (c *Client) GetApplication(ctx context.Context, id string) (*Application, error) {
	resp, err := c.api.GetFaxApplicationWithResponse(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("fax: get application: %w", err)
	}
	if resp.JSON200 == nil {
		return nil, fmt.Errorf("fax: get application: %w", parseError(resp.HTTPResponse, resp.Body))
	}
	a := applicationFrom(resp.JSON200.Data)
	return &a, nil
}

// UpdateApplicationParams says what to change; a nil field stays as it is,
// and an empty WebhookFailoverURL or OutboundVoiceProfileID removes it.
type UpdateApplicationParams struct {
	Name, WebhookURL, WebhookFailoverURL, OutboundVoiceProfileID *string
}

// UpdateApplication changes any subset of an application's fields and
// returns it as it now is.
func (c *Client) UpdateApplication(ctx context.Context, id string, p UpdateApplicationParams) (*Application, error) {
	body := faxapi.UpdateFaxApplicationJSONRequestBody{ApplicationName: p.Name, WebhookUrl: p.WebhookURL,
		WebhookFailoverUrl: p.WebhookFailoverURL, OutboundVoiceProfileId: p.OutboundVoiceProfileID}
	resp, err := c.api.UpdateFaxApplicationWithResponse(ctx, id, body)
	if err != nil {
		return nil, fmt.Errorf("fax: update application: %w", err)
	}
	if resp.JSON200 == nil {
		return nil, fmt.Errorf("fax: update application: %w", parseError(resp.HTTPResponse, resp.Body))
	}
	a := applicationFrom(resp.JSON200.Data)
	return &a, nil
}

// DeleteApplication deletes a fax application.
func (c *Client) DeleteApplication(ctx context.Context, id string) error {
	resp, err := c.api.DeleteFaxApplicationWithResponse(ctx, id)
	if err != nil {
		return fmt.Errorf("fax: delete application: %w", err)
	}
	if resp.StatusCode() != http.StatusNoContent {
		return fmt.Errorf("fax: delete application: %w", parseError(resp.HTTPResponse, resp.Body))
	}
	return nil
}
