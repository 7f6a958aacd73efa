package fax

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/apistack/apistack/gen/faxwebhooks"
)

// The webhook event types.
const (
	eventQueued                 = "fax.queued"
	eventMediaProcessed         = "fax.media.processed"
	eventSendingStarted         = "fax.sending.started"
	eventDelivered              = "fax.delivered"
	eventFailed                 = "fax.failed"
	eventReceivingStarted       = "fax.receiving.started"
	eventMediaProcessingStarted = "fax.media.processing.started"
	eventReceived               = "fax.received"
	eventDeleted                = "fax.deleted"
)

// EventTimeLayout is how occurred_at is written: ISO 8601 in UTC with exactly
// six fractional digits and Z, as the service description shows (Go's
// RFC3339Nano would drop trailing zeros).
const EventTimeLayout = "2006-01-02T15:04:05.000000Z"

// newEvent builds the outbox entry of event typ about f (as f is after the
// change the event reports). Its data is the envelope's "data" member, built
// from the generated webhook types so it matches webhooks.yaml.
func (s *Server) newEvent(f faxRow, typ string, now time.Time) (outboxEvent, error) {
	id := uuid.New()
	at := now.UTC().Truncate(time.Microsecond)
	occurred := at.Format(EventTimeLayout)
	base := faxwebhooks.FaxEventPayloadBase{
		FaxId: uuid.MustParse(f.ID), ConnectionId: f.ConnectionID, Direction: faxwebhooks.FaxDirection(f.Direction),
		From: f.From, To: f.To, Status: faxwebhooks.FaxStatus(f.Status), UserId: f.AccountID,
	}
	pages := 0
	if f.PageCount != nil {
		pages = *f.PageCount
	}
	duration := 0
	if f.CallDurationSecs != nil {
		duration = *f.CallDurationSecs
	}
	// The payload of the events that add the page count to the base (their
	// generated payload types have the same fields).
	paged := faxwebhooks.FaxMediaProcessedPayload{ConnectionId: base.ConnectionId, Direction: base.Direction, FaxId: base.FaxId,
		From: base.From, To: base.To, Status: base.Status, UserId: base.UserId, PageCount: pages}
	var d faxwebhooks.FaxEventData
	var err error
	switch typ {
	case eventQueued:
		err = d.FromFaxQueuedEvent(faxwebhooks.FaxQueuedEvent{Id: id, OccurredAt: occurred, RecordType: faxwebhooks.FaxQueuedEventRecordTypeEvent, Payload: base})
	case eventMediaProcessed:
		err = d.FromFaxMediaProcessedEvent(faxwebhooks.FaxMediaProcessedEvent{Id: id, OccurredAt: occurred, RecordType: faxwebhooks.FaxMediaProcessedEventRecordTypeEvent,
			Payload: paged})
	case eventSendingStarted:
		err = d.FromFaxSendingStartedEvent(faxwebhooks.FaxSendingStartedEvent{Id: id, OccurredAt: occurred, RecordType: faxwebhooks.FaxSendingStartedEventRecordTypeEvent,
			Payload: faxwebhooks.FaxSendingStartedPayload(paged)})
	case eventDelivered:
		err = d.FromFaxDeliveredEvent(faxwebhooks.FaxDeliveredEvent{Id: id, OccurredAt: occurred, RecordType: faxwebhooks.FaxDeliveredEventRecordTypeEvent,
			Payload: faxwebhooks.FaxDeliveredPayload{ConnectionId: base.ConnectionId, Direction: base.Direction, FaxId: base.FaxId,
				From: base.From, To: base.To, Status: base.Status, UserId: base.UserId, PageCount: pages, CallDurationSecs: duration}})
	case eventFailed:
		reason := ""
		if f.FailureReason != nil {
			reason = *f.FailureReason
		}
		err = d.FromFaxFailedEvent(faxwebhooks.FaxFailedEvent{Id: id, OccurredAt: occurred, RecordType: faxwebhooks.FaxFailedEventRecordTypeEvent,
			Payload: faxwebhooks.FaxFailedPayload{ConnectionId: base.ConnectionId, Direction: base.Direction, FaxId: base.FaxId,
				From: base.From, To: base.To, Status: base.Status, UserId: base.UserId, FailureReason: faxwebhooks.FaxFailureReason(reason)}})
	case eventReceivingStarted:
		err = d.FromFaxReceivingStartedEvent(faxwebhooks.FaxReceivingStartedEvent{Id: id, OccurredAt: occurred, RecordType: faxwebhooks.FaxReceivingStartedEventRecordTypeEvent, Payload: base})
	case eventMediaProcessingStarted:
		err = d.FromFaxMediaProcessingStartedEvent(faxwebhooks.FaxMediaProcessingStartedEvent{Id: id, OccurredAt: occurred, RecordType: faxwebhooks.FaxMediaProcessingStartedEventRecordTypeEvent,
			Payload: faxwebhooks.FaxMediaProcessingStartedPayload(paged)})
	case eventReceived:
		partial := f.PartialContent != nil && *f.PartialContent
		link := ""
		if f.MediaID != nil {
			link = s.mediaLink(*f.MediaID, now)
		}
		err = d.FromFaxReceivedEvent(faxwebhooks.FaxReceivedEvent{Id: id, OccurredAt: occurred, RecordType: faxwebhooks.FaxReceivedEventRecordTypeEvent,
			Payload: faxwebhooks.FaxReceivedPayload{ConnectionId: base.ConnectionId, Direction: base.Direction, FaxId: base.FaxId,
				From: base.From, To: base.To, Status: base.Status, UserId: base.UserId, PageCount: pages, CallDurationSecs: duration,
				MediaUrl: link, PartialContent: partial}})
	case eventDeleted:
		err = d.FromFaxDeletedEvent(faxwebhooks.FaxDeletedEvent{Id: id, OccurredAt: occurred, RecordType: faxwebhooks.FaxDeletedEventRecordTypeEvent, Payload: base})
	default:
		return outboxEvent{}, fmt.Errorf("fax: unknown event type %q", typ)
	}
	if err != nil {
		return outboxEvent{}, fmt.Errorf("fax: build %s event: %w", typ, err)
	}
	data, err := json.Marshal(d)
	if err != nil {
		return outboxEvent{}, fmt.Errorf("fax: encode %s event: %w", typ, err)
	}
	return outboxEvent{
		EventID: id.String(), FaxID: f.ID, Type: typ, Data: data,
		WebhookURL: f.WebhookURL, FailoverURL: f.WebhookFailoverURL, CreatedAt: now,
	}, nil
}
