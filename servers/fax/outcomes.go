package fax

import "github.com/apistack/apistack/gen/faxapi"

// outcome is what the simulator makes of an outbound fax: delivered, or
// failed with a reason while originating or while sending, after a number of
// sending steps.
type outcome struct {
	name string
	// failOriginating / failSending: the failure_reason, when the fax fails.
	failOriginating faxapi.FaxFailureReason
	failSending     faxapi.FaxFailureReason
	// sendingSteps is how many steps the sending state lasts.
	sendingSteps int
}

// delivered is the outcome of every number that is not a test number.
var delivered = outcome{name: "delivered", sendingSteps: 1}

// OutcomeNumber is one of the destination numbers with a chosen outcome
// (+1 312 555 08NN), documented in the spec and docs/apis.md.
type OutcomeNumber struct {
	// To is the destination number.
	To string
	// Outcome names what happens: "delivered", "slow" or a failure_reason.
	Outcome string
	// FailsWhile is "originating" or "sending" for a failure, "" otherwise.
	FailsWhile string
}

// testNumbers maps each test destination to its outcome.
var testNumbers = map[string]outcome{
	"+13125550800": delivered,
	"+13125550801": {name: "user_busy", failOriginating: faxapi.FaxFailureReasonUserBusy},
	"+13125550802": {name: "receiver_no_answer", failOriginating: faxapi.FaxFailureReasonReceiverNoAnswer},
	"+13125550803": {name: "receiver_decline", failOriginating: faxapi.FaxFailureReasonReceiverDecline},
	"+13125550804": {name: "receiver_unallocated_number", failOriginating: faxapi.FaxFailureReasonReceiverUnallocatedNumber},
	"+13125550805": {name: "receiver_incompatible_destination", failOriginating: faxapi.FaxFailureReasonReceiverIncompatibleDestination},
	"+13125550806": {name: "destination_unreachable", failOriginating: faxapi.FaxFailureReasonDestinationUnreachable},
	"+13125550807": {name: "service_unavailable", failOriginating: faxapi.FaxFailureReasonServiceUnavailable},
	"+13125550808": {name: "receiver_call_dropped", failSending: faxapi.FaxFailureReasonReceiverCallDropped, sendingSteps: 1},
	"+13125550809": {name: "fax_signaling_error", failSending: faxapi.FaxFailureReasonFaxSignalingError, sendingSteps: 1},
	"+13125550810": {name: "invalid_ecm_response_from_receiver", failSending: faxapi.FaxFailureReasonInvalidEcmResponseFromReceiver, sendingSteps: 1},
	"+13125550811": {name: "receiver_no_response", failSending: faxapi.FaxFailureReasonReceiverNoResponse, sendingSteps: 1},
	"+13125550820": {name: "slow", sendingSteps: 10},
}

// outcomeFor returns the outcome of sending to number.
func outcomeFor(number string) outcome {
	if o, ok := testNumbers[number]; ok {
		return o
	}
	return delivered
}

// outcomeNamed returns the outcome stored under name on a fax.
func outcomeNamed(name string) outcome {
	for _, o := range testNumbers {
		if o.name == name {
			return o
		}
	}
	return delivered
}

// OutcomeNumbers lists the test destination numbers and their outcomes.
func OutcomeNumbers() []OutcomeNumber {
	out := make([]OutcomeNumber, 0, len(testNumbers))
	for to, o := range testNumbers {
		tn := OutcomeNumber{To: to, Outcome: o.name}
		switch {
		case o.failOriginating != "":
			tn.FailsWhile = "originating"
		case o.failSending != "":
			tn.FailsWhile = "sending"
		}
		out = append(out, tn)
	}
	return out
}
