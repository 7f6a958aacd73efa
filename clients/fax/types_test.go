package fax_test

import (
	"testing"

	"github.com/apistack/apistack/clients/fax"
	"github.com/apistack/apistack/clients/internal/shapetest"
)

// Every schema of the spec the client exposes is a type of the package with
// every property as a field of a compatible type, and every enumeration
// value is a constant; the other schemas say why the client has no type.
func TestOwnTypes_MatchTheSpec(t *testing.T) {
	shapetest.Check{
		Spec: shapetest.Load(t, "fax/openapi.yaml"),
		Types: []shapetest.Type{
			{Schema: "Fax", Go: fax.Fax{}},
			{Schema: "FaxApplication", Go: fax.Application{}, Fields: map[string]string{"application_name": "Name"}},
			{Schema: "FaxDirection", Go: fax.Direction("")},
			{Schema: "FaxStatus", Go: fax.Status("")},
			{Schema: "FaxQuality", Go: fax.Quality("")},
			{Schema: "FaxFailureReason", Go: fax.FailureReason("")},
			{Schema: "Error", Go: fax.ErrorItem{}},
			{Schema: "ErrorSource", Go: fax.ErrorSource{}},
			{Schema: "Errors", Go: fax.Error{}, Fields: map[string]string{"errors": "Items"},
				Extra: map[string]string{"StatusCode": "the answer's HTTP status, which the body does not repeat"}},
		},
		NullAsZero: map[string]string{"outbound_voice_profile_id": `"" is an application that only receives`},
		Skip: map[string]string{
			"SendFaxRequest":              "SendFax takes SendFaxParams",
			"FaxResponse":                 "the methods unwrap data into a Fax",
			"FaxList":                     "ListFaxes unwraps the pages into an iterator of Fax",
			"PageMeta":                    "ListFaxes and ListApplications follow the pages themselves",
			"FaxApplicationResponse":      "the methods unwrap data into an Application",
			"FaxApplicationList":          "ListApplications unwraps the pages into an iterator of Application",
			"CreateFaxApplicationRequest": "CreateApplication takes CreateApplicationParams",
			"UpdateFaxApplicationRequest": "UpdateApplication takes UpdateApplicationParams",
			"TooManyRequestsErrors":       "a 429's body has the shape of Errors and is read into an Error; the client retries a 429 after its Retry-After before it answers one",
		},
	}.Run(t)
}

// The webhooks spec alike: the enumerations are the client's types; the
// events are the generated types an Event carries.
func TestOwnTypes_MatchTheWebhooksSpec(t *testing.T) {
	const typed = "the generated faxwebhooks type Event.Value holds, which the generator keeps in step with the spec"
	shapetest.Check{
		Spec: shapetest.Load(t, "fax/webhooks.yaml"),
		Types: []shapetest.Type{
			{Schema: "FaxDirection", Go: fax.Direction("")},
			{Schema: "FaxStatus", Go: fax.Status("")},
			{Schema: "FaxFailureReason", Go: fax.FailureReason("")},
		},
		Skip: map[string]string{
			"WebhookError":                     "the answer of the receiver (Handler), not something a client reads",
			"FaxEvent":                         "Event carries data's id, event_type and occurred_at and meta's attempt and delivered_to, and data itself in Value",
			"FaxEventMeta":                     "Event carries attempt and delivered_to",
			"FaxEventData":                     typed,
			"FaxEventPayloadBase":              typed,
			"FaxQueuedEvent":                   typed,
			"FaxQueuedPayload":                 typed,
			"FaxMediaProcessedEvent":           typed,
			"FaxMediaProcessedPayload":         typed,
			"FaxSendingStartedEvent":           typed,
			"FaxSendingStartedPayload":         typed,
			"FaxDeliveredEvent":                typed,
			"FaxDeliveredPayload":              typed,
			"FaxFailedEvent":                   typed,
			"FaxFailedPayload":                 typed,
			"FaxReceivingStartedEvent":         typed,
			"FaxReceivingStartedPayload":       typed,
			"FaxMediaProcessingStartedEvent":   typed,
			"FaxMediaProcessingStartedPayload": typed,
			"FaxReceivedEvent":                 typed,
			"FaxReceivedPayload":               typed,
			"FaxDeletedEvent":                  typed,
			"FaxDeletedPayload":                typed,
		},
	}.Run(t)
}
