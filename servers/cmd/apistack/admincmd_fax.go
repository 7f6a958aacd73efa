package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/google/uuid"

	"github.com/apistack/apistack/gen/adminapi"
)

// faxAdminCommand runs one fax command of `apistack admin` and returns the
// answer's status and body.
func faxAdminCommand(ctx context.Context, client *adminapi.ClientWithResponses, cmd string, args []string, stderr io.Writer) (int, []byte, error) {
	switch cmd {
	case "fax-create-account":
		if len(args) != 1 {
			return 0, nil, errors.New("usage: fax-create-account NAME")
		}
		r, err := client.CreateFaxAccountWithResponse(ctx, adminapi.FaxCreateAccountRequest{Name: args[0]})
		if err != nil {
			return 0, nil, err
		}
		return r.StatusCode(), r.Body, nil
	case "fax-create-key":
		if len(args) < 1 || len(args) > 2 {
			return 0, nil, errors.New("usage: fax-create-key ACCOUNT [REPLACED_KEY_ID]")
		}
		var req adminapi.FaxCreateAPIKeyRequest
		if len(args) == 2 {
			id, err := uuid.Parse(args[1])
			if err != nil {
				return 0, nil, fmt.Errorf("REPLACED_KEY_ID: %w", err)
			}
			req.Replaces = &id
		}
		r, err := client.CreateFaxAPIKeyWithResponse(ctx, args[0], req)
		if err != nil {
			return 0, nil, err
		}
		return r.StatusCode(), r.Body, nil
	case "fax-revoke-key":
		if len(args) != 2 {
			return 0, nil, errors.New("usage: fax-revoke-key ACCOUNT KEY_ID")
		}
		id, err := uuid.Parse(args[1])
		if err != nil {
			return 0, nil, fmt.Errorf("KEY_ID: %w", err)
		}
		r, err := client.RevokeFaxAPIKeyWithResponse(ctx, args[0], id)
		if err != nil {
			return 0, nil, err
		}
		return r.StatusCode(), r.Body, nil
	case "fax-set-number":
		if len(args) < 2 || len(args) > 3 {
			return 0, nil, errors.New("usage: fax-set-number ACCOUNT NUMBER [APP_ID]")
		}
		var req adminapi.FaxSetNumberRequest
		if len(args) == 3 {
			id, err := uuid.Parse(args[2])
			if err != nil {
				return 0, nil, fmt.Errorf("APP_ID: %w", err)
			}
			req.ApplicationId = &id
		}
		r, err := client.SetFaxNumberWithResponse(ctx, args[0], args[1], req)
		if err != nil {
			return 0, nil, err
		}
		return r.StatusCode(), r.Body, nil
	case "fax-inject":
		sub := flag.NewFlagSet("fax-inject", flag.ContinueOnError)
		sub.SetOutput(stderr)
		outcome := sub.String("outcome", "received", "received, partial or failed")
		if err := sub.Parse(args); err != nil {
			return 0, nil, err
		}
		a := sub.Args()
		if len(a) != 3 {
			return 0, nil, errors.New("usage: fax-inject [--outcome received|partial|failed] FROM TO FILE.pdf")
		}
		doc, err := os.ReadFile(a[2])
		if err != nil {
			return 0, nil, fmt.Errorf("read the document: %w", err)
		}
		r, err := client.InjectFaxInboundWithResponse(ctx, adminapi.FaxInboundRequest{
			From: a[0], To: a[1], Document: doc, Outcome: adminapi.FaxInboundOutcome(*outcome)})
		if err != nil {
			return 0, nil, err
		}
		return r.StatusCode(), r.Body, nil
	case "fax-webhook-key":
		r, err := client.GetFaxWebhookPublicKeyWithResponse(ctx)
		if err != nil {
			return 0, nil, err
		}
		return r.StatusCode(), r.Body, nil
	case "fax-webhook-stats":
		r, err := client.GetFaxWebhookStatsWithResponse(ctx)
		if err != nil {
			return 0, nil, err
		}
		return r.StatusCode(), r.Body, nil
	}
	return 0, nil, fmt.Errorf("unknown fax command %q", cmd)
}
