package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"strconv"

	"github.com/google/uuid"

	"github.com/apistack/apistack/gen/adminapi"
	"github.com/apistack/apistack/servers/fax"
)

// faxServer returns the fax server, or an error when this process does not
// serve the fax API.
func (s *Server) faxServer() (Fax, error) {
	if s.cfg.Fax == nil {
		return nil, errNotFound("the fax API is not served by this process")
	}
	return s.cfg.Fax, nil
}

// faxAccount returns the fax server and the named account.
func (s *Server) faxAccount(ctx context.Context, name string) (Fax, fax.Account, error) {
	fs, err := s.faxServer()
	if err != nil {
		return nil, fax.Account{}, err
	}
	a, err := fs.AccountByName(ctx, name)
	if errors.Is(err, fax.ErrNotFound) {
		return nil, fax.Account{}, errNotFound("fax account %q does not exist", name)
	}
	if err != nil {
		return nil, fax.Account{}, fmt.Errorf("read fax account: %w", err)
	}
	return fs, a, nil
}

// faxError turns the fax server's sentinel errors into admin API errors;
// what names the object a not-found error is about.
func faxError(err error, what string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fax.ErrInvalid):
		return errBadRequest("%s", err.Error())
	case errors.Is(err, fax.ErrNotFound):
		return errNotFound("%s does not exist", what)
	case errors.Is(err, fax.ErrAlreadyExists):
		return errConflict("%s exists already", what)
	}
	return err
}

// CreateFaxAccount creates a fax account and its first API key.
func (s *Server) CreateFaxAccount(ctx context.Context, req adminapi.CreateFaxAccountRequestObject) (adminapi.CreateFaxAccountResponseObject, error) {
	fs, err := s.faxServer()
	if err != nil {
		return nil, err
	}
	a, err := fs.CreateAccount(ctx, req.Body.Name)
	if err != nil {
		return nil, faxError(err, fmt.Sprintf("fax account %q", req.Body.Name))
	}
	keyID, key, err := fs.IssueAPIKey(ctx, a.ID)
	if err != nil {
		return nil, fmt.Errorf("issue fax api key: %w", err)
	}
	return adminapi.CreateFaxAccount201JSONResponse{
		Account: toAPIFaxAccount(a),
		ApiKey:  adminapi.FaxAPIKey{Id: uuid.MustParse(keyID), Key: key},
	}, nil
}

// GetFaxAccount returns a fax account.
func (s *Server) GetFaxAccount(ctx context.Context, req adminapi.GetFaxAccountRequestObject) (adminapi.GetFaxAccountResponseObject, error) {
	_, a, err := s.faxAccount(ctx, req.AccountName)
	if err != nil {
		return nil, err
	}
	return adminapi.GetFaxAccount200JSONResponse(toAPIFaxAccount(a)), nil
}

// CreateFaxAPIKey issues an API key, revoking the one it replaces.
func (s *Server) CreateFaxAPIKey(ctx context.Context, req adminapi.CreateFaxAPIKeyRequestObject) (adminapi.CreateFaxAPIKeyResponseObject, error) {
	fs, a, err := s.faxAccount(ctx, req.AccountName)
	if err != nil {
		return nil, err
	}
	replaced := ""
	if req.Body.Replaces != nil {
		replaced = req.Body.Replaces.String()
	}
	keyID, key, err := fs.RotateAPIKey(ctx, a.ID, replaced)
	if err != nil {
		return nil, faxError(err, fmt.Sprintf("API key %s of fax account %q", replaced, a.Name))
	}
	return adminapi.CreateFaxAPIKey201JSONResponse{Id: uuid.MustParse(keyID), Key: key, Replaced: req.Body.Replaces}, nil
}

// RevokeFaxAPIKey revokes an API key.
func (s *Server) RevokeFaxAPIKey(ctx context.Context, req adminapi.RevokeFaxAPIKeyRequestObject) (adminapi.RevokeFaxAPIKeyResponseObject, error) {
	fs, a, err := s.faxAccount(ctx, req.AccountName)
	if err != nil {
		return nil, err
	}
	if err := fs.RevokeAPIKey(ctx, a.ID, req.KeyId.String()); err != nil {
		return nil, faxError(err, fmt.Sprintf("API key %s of fax account %q", req.KeyId, a.Name))
	}
	return adminapi.RevokeFaxAPIKey204Response{}, nil
}

// CreateFaxOutboundVoiceProfile creates an outbound voice profile.
func (s *Server) CreateFaxOutboundVoiceProfile(ctx context.Context, req adminapi.CreateFaxOutboundVoiceProfileRequestObject) (adminapi.CreateFaxOutboundVoiceProfileResponseObject, error) {
	fs, a, err := s.faxAccount(ctx, req.AccountName)
	if err != nil {
		return nil, err
	}
	id, err := fs.CreateOutboundVoiceProfile(ctx, a.ID, req.Body.Name)
	if err != nil {
		return nil, fmt.Errorf("create outbound voice profile: %w", err)
	}
	return adminapi.CreateFaxOutboundVoiceProfile201JSONResponse{Id: uuid.MustParse(id), Name: req.Body.Name}, nil
}

// CreateFaxApplication creates a fax application for an account.
func (s *Server) CreateFaxApplication(ctx context.Context, req adminapi.CreateFaxApplicationRequestObject) (adminapi.CreateFaxApplicationResponseObject, error) {
	fs, a, err := s.faxAccount(ctx, req.AccountName)
	if err != nil {
		return nil, err
	}
	in := fax.Application{AccountID: a.ID, Name: req.Body.Name, WebhookURL: req.Body.WebhookUrl}
	if req.Body.WebhookFailoverUrl != nil {
		in.WebhookFailoverURL = *req.Body.WebhookFailoverUrl
	}
	if req.Body.OutboundVoiceProfileId != nil {
		in.OutboundVoiceProfileID = req.Body.OutboundVoiceProfileId.String()
	}
	app, err := fs.CreateApplication(ctx, in)
	if err != nil {
		return nil, faxError(err, "fax application")
	}
	out := adminapi.CreateFaxApplication201JSONResponse{
		Id: uuid.MustParse(app.ID), Name: app.Name, WebhookUrl: app.WebhookURL, WebhookFailoverUrl: app.WebhookFailoverURL,
		OutboundVoiceProfileId: req.Body.OutboundVoiceProfileId,
	}
	return out, nil
}

// SetFaxNumber gives a number to an account, enabled on an application.
func (s *Server) SetFaxNumber(ctx context.Context, req adminapi.SetFaxNumberRequestObject) (adminapi.SetFaxNumberResponseObject, error) {
	fs, a, err := s.faxAccount(ctx, req.AccountName)
	if err != nil {
		return nil, err
	}
	appID := ""
	if req.Body.ApplicationId != nil {
		appID = req.Body.ApplicationId.String()
	}
	err = fs.AssignNumber(ctx, a.ID, req.PhoneNumber, appID)
	switch {
	case errors.Is(err, fax.ErrAlreadyExists):
		return nil, errConflict("%s belongs to another fax account", req.PhoneNumber)
	case errors.Is(err, fax.ErrNotFound):
		return nil, errNotFound("fax application %s of account %q does not exist", appID, a.Name)
	case err != nil:
		return nil, faxError(err, "")
	}
	return adminapi.SetFaxNumber200JSONResponse{PhoneNumber: req.PhoneNumber, AccountName: a.Name, ApplicationId: req.Body.ApplicationId}, nil
}

// inboundOutcomes maps the admin API's outcomes to the fax server's.
var inboundOutcomes = map[adminapi.FaxInboundOutcome]string{
	adminapi.FaxInboundOutcomeReceived: fax.InboundReceived,
	adminapi.FaxInboundOutcomePartial:  fax.InboundPartial,
	adminapi.FaxInboundOutcomeFailed:   fax.InboundSenderCallDropped,
}

// InjectFaxInbound starts an inbound fax, from JSON or a multipart form.
func (s *Server) InjectFaxInbound(ctx context.Context, req adminapi.InjectFaxInboundRequestObject) (adminapi.InjectFaxInboundResponseObject, error) {
	fs, err := s.faxServer()
	if err != nil {
		return nil, err
	}
	var in adminapi.FaxInboundRequest
	switch {
	case req.JSONBody != nil:
		in = *req.JSONBody
	case req.MultipartBody != nil:
		if in, err = readInboundForm(req.MultipartBody); err != nil {
			return nil, err
		}
	default:
		return nil, errBadRequest("the body is missing")
	}
	pages, err := fax.CountPages(in.Document)
	if err != nil {
		return nil, errBadRequest("the document is not a readable PDF: %v", err)
	}
	f := fax.InboundFax{From: in.From, To: in.To, Document: in.Document, Outcome: inboundOutcomes[in.Outcome]}
	if in.CallDurationSecs != nil {
		f.CallDurationSecs = *in.CallDurationSecs
	}
	id, err := fs.InjectInbound(ctx, f)
	if errors.Is(err, fax.ErrNotFound) {
		return nil, errNotFound("%s is not a number enabled on a fax application", in.To)
	}
	if err != nil {
		return nil, faxError(err, "")
	}
	return adminapi.InjectFaxInbound201JSONResponse{FaxId: uuid.MustParse(id), From: in.From, To: in.To, Outcome: in.Outcome, PageCount: pages}, nil
}

// readInboundForm reads the multipart form of an inbound fax. The validator
// has checked its fields already; what is left is collecting them.
func readInboundForm(r *multipart.Reader) (adminapi.FaxInboundRequest, error) {
	var in adminapi.FaxInboundRequest
	for {
		p, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return in, errBadRequest("the multipart body cannot be read: %v", err)
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return in, errBadRequest("the multipart part %q cannot be read: %v", p.FormName(), err)
		}
		switch p.FormName() {
		case "from":
			in.From = string(data)
		case "to":
			in.To = string(data)
		case "outcome":
			in.Outcome = adminapi.FaxInboundOutcome(data)
		case "document":
			in.Document = data
		case "call_duration_secs":
			n, err := strconv.Atoi(string(data))
			if err != nil {
				return in, errBadRequest("call_duration_secs %q is not an integer", data)
			}
			in.CallDurationSecs = &n
		}
	}
	if _, ok := inboundOutcomes[in.Outcome]; !ok || in.From == "" || in.To == "" || len(in.Document) == 0 {
		return in, errBadRequest("the form needs from, to, document and outcome (received, partial or failed)")
	}
	return in, nil
}

// GetFaxWebhookPublicKey returns the key fax webhooks are signed with.
func (s *Server) GetFaxWebhookPublicKey(_ context.Context, _ adminapi.GetFaxWebhookPublicKeyRequestObject) (adminapi.GetFaxWebhookPublicKeyResponseObject, error) {
	fs, err := s.faxServer()
	if err != nil {
		return nil, err
	}
	return adminapi.GetFaxWebhookPublicKey200JSONResponse{
		Algorithm: adminapi.FaxWebhookPublicKeyAlgorithmEd25519, PublicKey: fs.WebhookPublicKey(),
	}, nil
}

// GetFaxWebhookStats counts the fax webhook outbox's events by fate.
func (s *Server) GetFaxWebhookStats(ctx context.Context, _ adminapi.GetFaxWebhookStatsRequestObject) (adminapi.GetFaxWebhookStatsResponseObject, error) {
	fs, err := s.faxServer()
	if err != nil {
		return nil, err
	}
	pending, delivered, abandoned, err := fs.WebhookStats(ctx)
	if err != nil {
		return nil, fmt.Errorf("fax webhook stats: %w", err)
	}
	return adminapi.GetFaxWebhookStats200JSONResponse{Pending: pending, Delivered: delivered, Abandoned: abandoned}, nil
}

func toAPIFaxAccount(a fax.Account) adminapi.FaxAccount {
	return adminapi.FaxAccount{Id: uuid.MustParse(a.ID), Name: a.Name, CreatedAt: a.CreatedAt.UTC()}
}
