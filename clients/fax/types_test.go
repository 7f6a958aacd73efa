package fax_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/apistack/apistack/clients/fax"
	"github.com/apistack/apistack/gen/faxapi"
)

// The package's own enumeration types hold the spec's values.
func TestOwnTypes_ConstantsAreTheSpecs(t *testing.T) {
	for _, v := range []fax.FailureReason{fax.FailureReasonDestinationUnreachable, fax.FailureReasonFaxSignalingError, fax.FailureReasonFileDownloadFailed, fax.FailureReasonFileFormatInvalid, fax.FailureReasonInvalidEcmResponseFromReceiver, fax.FailureReasonPageCountLimitExceeded, fax.FailureReasonReceiverCallDropped, fax.FailureReasonReceiverDecline, fax.FailureReasonReceiverIncompatibleDestination, fax.FailureReasonReceiverNoAnswer, fax.FailureReasonReceiverNoResponse, fax.FailureReasonReceiverUnallocatedNumber, fax.FailureReasonSenderCallDropped, fax.FailureReasonServiceUnavailable, fax.FailureReasonUserBusy, fax.FailureReasonUserCancelled} {
		assert.True(t, faxapi.FaxFailureReason(v).Valid(), "%q", v)
	}
	for _, v := range []fax.Quality{fax.QualityHigh, fax.QualityNormal, fax.QualityUltraDark, fax.QualityUltraLight, fax.QualityVeryHigh} {
		assert.True(t, faxapi.FaxQuality(v).Valid(), "%q", v)
	}
	for _, v := range []fax.Status{fax.StatusDelivered, fax.StatusFailed, fax.StatusInitiated, fax.StatusMediaProcessed, fax.StatusMediaProcessing, fax.StatusOriginated, fax.StatusQueued, fax.StatusReceived, fax.StatusReceiving, fax.StatusSending} {
		assert.True(t, faxapi.FaxStatus(v).Valid(), "%q", v)
	}
	for _, v := range []fax.Direction{fax.DirectionInbound, fax.DirectionOutbound} {
		assert.True(t, faxapi.FaxDirection(v).Valid(), "%q", v)
	}
}
