package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/gen/sandboxserver"
	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/internal/storeerr"
)

// Fax is the fax server the inbound-fax trigger goes through
// (*fax.Operator, a fax server's Operator()).
type Fax interface {
	InjectInbound(ctx context.Context, in fax.InboundFax) (string, error)
}

var _ Fax = (*fax.Operator)(nil)

// DefaultInboundFrom is the sender of an inbound fax whose trigger names
// none.
const DefaultInboundFrom = "+14155550123"

// MaxInboundDocument is the largest document an inbound-fax trigger takes.
const MaxInboundDocument = 10 << 20

// inboundOutcomes maps the trigger's outcomes to the fax server's.
var inboundOutcomes = map[sandboxapi.InboundFaxRequestOutcome]string{
	sandboxapi.InboundFaxRequestOutcomeReceived: fax.InboundReceived,
	sandboxapi.InboundFaxRequestOutcomePartial:  fax.InboundPartial,
	sandboxapi.InboundFaxRequestOutcomeFailed:   fax.InboundSenderCallDropped,
}

// TriggerInboundFax makes an inbound fax arrive at a number of the
// sandbox's fax account, as the admin API's and the kit's injection do.
func (s *Server) TriggerInboundFax(ctx context.Context, req sandboxserver.TriggerInboundFaxRequestObject) (sandboxserver.TriggerInboundFaxResponseObject, error) {
	r, err := s.ready(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	if s.cfg.Fax == nil {
		return nil, errors.New("sandbox: no fax server to make an inbound fax arrive at")
	}
	var b sandboxapi.InboundFaxRequest
	if req.Body != nil {
		b = *req.Body
	}
	in := fax.InboundFax{From: DefaultInboundFrom, Outcome: fax.InboundReceived, Account: r.ID}
	outcome := sandboxapi.InboundFaxRequestOutcomeReceived
	if b.Outcome != nil {
		outcome = *b.Outcome
		in.Outcome = inboundOutcomes[outcome]
	}
	if b.From != nil {
		in.From = *b.From
	}
	if b.To != nil {
		in.To = *b.To
	} else if in.To, err = s.faxNumber(r); err != nil {
		return nil, err
	}
	if b.CallDurationSecs != nil {
		in.CallDurationSecs = *b.CallDurationSecs
	}
	switch {
	case b.Document != nil && b.Pages != nil:
		return nil, errBadRequest("document and pages exclude each other: pages is the length of the sample PDF sent when no document is given")
	case b.Document != nil:
		if len(*b.Document) > MaxInboundDocument {
			return nil, errBadRequest("document is %d bytes: at most %d", len(*b.Document), MaxInboundDocument)
		}
		in.Document = *b.Document
	default:
		pages := 1
		if b.Pages != nil {
			pages = *b.Pages
		}
		if in.Document, err = fax.SamplePDF(pages); err != nil {
			return nil, errBadRequest("pages: %v", err)
		}
	}
	pages, err := fax.CountPages(in.Document)
	if err != nil {
		return nil, errBadRequest("document is not a readable PDF: %v", err)
	}
	id, err := s.cfg.Fax.InjectInbound(ctx, in)
	switch {
	case errors.Is(err, storeerr.ErrInvalid):
		return nil, errBadRequest("%v", err)
	case errors.Is(err, storeerr.ErrNotFound):
		return nil, errBadRequest("to %s is not a number of the sandbox's fax account enabled on its application", in.To)
	case err != nil:
		return nil, fmt.Errorf("inbound fax: %w", err)
	}
	faxID, err := uuid.Parse(id)
	if err != nil {
		return nil, fmt.Errorf("inbound fax id %q: %w", id, err)
	}
	return sandboxserver.TriggerInboundFax201JSONResponse{FaxId: faxID, From: in.From, To: in.To,
		Outcome: sandboxapi.InboundFaxOutcome(outcome), PageCount: pages}, nil
}

// faxNumber is the sandbox's fax number, from its credentials.
func (s *Server) faxNumber(r record) (string, error) {
	creds, err := s.credentials(r)
	if err != nil {
		return "", err
	}
	var sections struct {
		Fax struct {
			From string `json:"from"`
		} `json:"fax"`
	}
	if err := json.Unmarshal(creds, &sections); err != nil {
		return "", fmt.Errorf("sandbox %s: credentials: %w", r.ID, err)
	}
	if sections.Fax.From == "" {
		return "", fmt.Errorf("sandbox %s: its credentials name no fax number", r.ID)
	}
	return sections.Fax.From, nil
}
