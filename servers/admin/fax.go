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
	"github.com/apistack/apistack/gen/adminserver"
	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/internal/storeerr"
)

// faxAccount returns the named fax account.
func (s *Server) faxAccount(ctx context.Context, name string) (fax.Account, error) {
	a, err := s.cfg.Fax.AccountByName(ctx, name)
	if err != nil {
		return fax.Account{}, notFound(fmt.Errorf("read fax account: %w", err), "fax account %q does not exist", name)
	}
	return a, nil
}

// faxError says what the store sentinels mean for an operation on the
// object what names: invalid input is answered with its own text.
func faxError(err error, what string) error {
	return about(err, sentences{
		storeerr.ErrInvalid:       "",
		storeerr.ErrNotFound:      what + " does not exist",
		storeerr.ErrAlreadyExists: what + " exists already",
	})
}

// CreateFaxAccount creates a fax account and its first API key.
func (s *Server) CreateFaxAccount(ctx context.Context, req adminserver.CreateFaxAccountRequestObject) (adminserver.CreateFaxAccountResponseObject, error) {
	a, err := s.cfg.Fax.CreateAccount(ctx, req.Body.Name)
	if err != nil {
		return nil, faxError(err, fmt.Sprintf("fax account %q", req.Body.Name))
	}
	keyID, key, err := s.cfg.Fax.IssueAPIKey(ctx, a.ID)
	if err != nil {
		return nil, fmt.Errorf("issue fax api key: %w", err)
	}
	return adminserver.CreateFaxAccount201JSONResponse{
		Account: toAPIFaxAccount(a),
		ApiKey:  adminapi.FaxAPIKey{Id: uuid.MustParse(keyID), Key: key},
	}, nil
}

// GetFaxAccount returns a fax account.
func (s *Server) GetFaxAccount(ctx context.Context, req adminserver.GetFaxAccountRequestObject) (adminserver.GetFaxAccountResponseObject, error) {
	a, err := s.faxAccount(ctx, req.AccountName)
	if err != nil {
		return nil, err
	}
	return adminserver.GetFaxAccount200JSONResponse(toAPIFaxAccount(a)), nil
}

// CreateFaxAPIKey issues an API key, revoking the one it replaces.
func (s *Server) CreateFaxAPIKey(ctx context.Context, req adminserver.CreateFaxAPIKeyRequestObject) (adminserver.CreateFaxAPIKeyResponseObject, error) {
	a, err := s.faxAccount(ctx, req.AccountName)
	if err != nil {
		return nil, err
	}
	replaced := ""
	if req.Body.Replaces != nil {
		replaced = req.Body.Replaces.String()
	}
	keyID, key, err := s.cfg.Fax.RotateAPIKey(ctx, a.ID, replaced)
	if err != nil {
		return nil, faxError(err, fmt.Sprintf("API key %s of fax account %q", replaced, a.Name))
	}
	return adminserver.CreateFaxAPIKey201JSONResponse{Id: uuid.MustParse(keyID), Key: key, Replaced: req.Body.Replaces}, nil
}

// RevokeFaxAPIKey revokes an API key.
func (s *Server) RevokeFaxAPIKey(ctx context.Context, req adminserver.RevokeFaxAPIKeyRequestObject) (adminserver.RevokeFaxAPIKeyResponseObject, error) {
	a, err := s.faxAccount(ctx, req.AccountName)
	if err != nil {
		return nil, err
	}
	if err := s.cfg.Fax.RevokeAPIKey(ctx, a.ID, req.KeyId.String()); err != nil {
		return nil, faxError(err, fmt.Sprintf("API key %s of fax account %q", req.KeyId, a.Name))
	}
	return adminserver.RevokeFaxAPIKey204Response{}, nil
}

// CreateFaxOutboundVoiceProfile creates an outbound voice profile.
func (s *Server) CreateFaxOutboundVoiceProfile(ctx context.Context, req adminserver.CreateFaxOutboundVoiceProfileRequestObject) (adminserver.CreateFaxOutboundVoiceProfileResponseObject, error) {
	a, err := s.faxAccount(ctx, req.AccountName)
	if err != nil {
		return nil, err
	}
	id, err := s.cfg.Fax.CreateOutboundVoiceProfile(ctx, a.ID, req.Body.Name)
	if err != nil {
		return nil, fmt.Errorf("create outbound voice profile: %w", err)
	}
	return adminserver.CreateFaxOutboundVoiceProfile201JSONResponse{Id: uuid.MustParse(id), Name: req.Body.Name}, nil
}

// CreateFaxApplication creates a fax application for an account.
func (s *Server) CreateFaxApplication(ctx context.Context, req adminserver.CreateFaxApplicationRequestObject) (adminserver.CreateFaxApplicationResponseObject, error) {
	a, err := s.faxAccount(ctx, req.AccountName)
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
	app, err := s.cfg.Fax.CreateApplication(ctx, in)
	if err != nil {
		return nil, faxError(err, "fax application")
	}
	out := adminserver.CreateFaxApplication201JSONResponse{
		Id: uuid.MustParse(app.ID), Name: app.Name, WebhookUrl: app.WebhookURL, WebhookFailoverUrl: app.WebhookFailoverURL,
		OutboundVoiceProfileId: req.Body.OutboundVoiceProfileId,
	}
	return out, nil
}

// SetFaxNumber gives a number to an account, enabled on an application.
func (s *Server) SetFaxNumber(ctx context.Context, req adminserver.SetFaxNumberRequestObject) (adminserver.SetFaxNumberResponseObject, error) {
	a, err := s.faxAccount(ctx, req.AccountName)
	if err != nil {
		return nil, err
	}
	appID := ""
	if req.Body.ApplicationId != nil {
		appID = req.Body.ApplicationId.String()
	}
	if err := s.cfg.Fax.AssignNumber(ctx, a.ID, req.PhoneNumber, appID); err != nil {
		return nil, about(err, sentences{
			storeerr.ErrInvalid:       "",
			storeerr.ErrAlreadyExists: req.PhoneNumber + " belongs to another fax account",
			storeerr.ErrNotFound:      fmt.Sprintf("fax application %s of account %q does not exist", appID, a.Name),
		})
	}
	return adminserver.SetFaxNumber200JSONResponse{PhoneNumber: req.PhoneNumber, AccountName: a.Name, ApplicationId: req.Body.ApplicationId}, nil
}

// inboundOutcomes maps the admin API's outcomes to the fax server's.
var inboundOutcomes = map[adminapi.FaxInboundOutcome]string{
	adminapi.FaxInboundOutcomeReceived: fax.InboundReceived,
	adminapi.FaxInboundOutcomePartial:  fax.InboundPartial,
	adminapi.FaxInboundOutcomeFailed:   fax.InboundSenderCallDropped,
}

// InjectFaxInbound starts an inbound fax, from JSON or a multipart form.
func (s *Server) InjectFaxInbound(ctx context.Context, req adminserver.InjectFaxInboundRequestObject) (adminserver.InjectFaxInboundResponseObject, error) {
	var in adminapi.FaxInboundRequest
	var err error
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
	id, err := s.cfg.Fax.InjectInbound(ctx, f)
	if err != nil {
		return nil, about(err, sentences{
			storeerr.ErrInvalid:  "",
			storeerr.ErrNotFound: in.To + " is not a number enabled on a fax application",
		})
	}
	return adminserver.InjectFaxInbound201JSONResponse{FaxId: uuid.MustParse(id), From: in.From, To: in.To, Outcome: in.Outcome, PageCount: pages}, nil
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
func (s *Server) GetFaxWebhookPublicKey(_ context.Context, _ adminserver.GetFaxWebhookPublicKeyRequestObject) (adminserver.GetFaxWebhookPublicKeyResponseObject, error) {
	return adminserver.GetFaxWebhookPublicKey200JSONResponse{
		Algorithm: adminapi.FaxWebhookPublicKeyAlgorithmEd25519, PublicKey: s.cfg.Fax.WebhookPublicKey(),
	}, nil
}

// GetFaxWebhookStats counts the fax webhook outbox's events by fate.
func (s *Server) GetFaxWebhookStats(ctx context.Context, _ adminserver.GetFaxWebhookStatsRequestObject) (adminserver.GetFaxWebhookStatsResponseObject, error) {
	pending, delivered, abandoned, err := s.cfg.Fax.WebhookStats(ctx)
	if err != nil {
		return nil, fmt.Errorf("fax webhook stats: %w", err)
	}
	return adminserver.GetFaxWebhookStats200JSONResponse{Pending: pending, Delivered: delivered, Abandoned: abandoned}, nil
}

func toAPIFaxAccount(a fax.Account) adminapi.FaxAccount {
	return adminapi.FaxAccount{Id: uuid.MustParse(a.ID), Name: a.Name, CreatedAt: a.CreatedAt.UTC()}
}
