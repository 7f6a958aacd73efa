package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"

	"github.com/google/uuid"

	"github.com/apistack/apistack/gen/adminapi"
)

// uuidArg parses a[i], the argument named name, as a UUID; nil when a
// stops before it.
func uuidArg(a []string, i int, name string) (*uuid.UUID, error) {
	if i >= len(a) {
		return nil, nil
	}
	id, err := uuid.Parse(a[i])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &id, nil
}

// faxAdminCommands are the fax commands of `apistack admin`.
var faxAdminCommands = []adminCmd{
	{name: "fax-create-account", args: "NAME", help: "create a fax account with its first API key", minArgs: 1, maxArgs: 1,
		run: noFlags(func(ctx context.Context, c adminapi.ClientInterface, a []string) (*http.Response, error) {
			return c.CreateFaxAccount(ctx, adminapi.FaxCreateAccountRequest{Name: a[0]})
		})},
	{name: "fax-create-key", args: "ACCOUNT [REPLACED_KEY_ID]", help: "issue a fax API key (rotate: revoke REPLACED_KEY_ID with it)", minArgs: 1, maxArgs: 2,
		run: noFlags(func(ctx context.Context, c adminapi.ClientInterface, a []string) (*http.Response, error) {
			replaces, err := uuidArg(a, 1, "REPLACED_KEY_ID")
			if err != nil {
				return nil, err
			}
			return c.CreateFaxAPIKey(ctx, a[0], adminapi.FaxCreateAPIKeyRequest{Replaces: replaces})
		})},
	{name: "fax-revoke-key", args: "ACCOUNT KEY_ID", help: "revoke a fax API key", minArgs: 2, maxArgs: 2,
		run: noFlags(func(ctx context.Context, c adminapi.ClientInterface, a []string) (*http.Response, error) {
			id, err := uuidArg(a, 1, "KEY_ID")
			if err != nil {
				return nil, err
			}
			return c.RevokeFaxAPIKey(ctx, a[0], *id)
		})},
	{name: "fax-set-number", args: "ACCOUNT NUMBER [APP_ID]", help: "give NUMBER (E.164) to ACCOUNT, enabled on APP_ID", minArgs: 2, maxArgs: 3,
		run: noFlags(func(ctx context.Context, c adminapi.ClientInterface, a []string) (*http.Response, error) {
			app, err := uuidArg(a, 2, "APP_ID")
			if err != nil {
				return nil, err
			}
			return c.SetFaxNumber(ctx, a[0], a[1], adminapi.FaxSetNumberRequest{ApplicationId: app})
		})},
	{name: "fax-inject", args: "[--outcome O] FROM TO FILE.pdf", help: "inject an inbound fax (O: received, partial, failed)", minArgs: 3, maxArgs: 3,
		run: func(fs *flag.FlagSet) adminCall {
			outcome := fs.String("outcome", "received", "received, partial or failed")
			return func(ctx context.Context, c adminapi.ClientInterface, a []string) (*http.Response, error) {
				doc, err := os.ReadFile(a[2])
				if err != nil {
					return nil, fmt.Errorf("read the document: %w", err)
				}
				return c.InjectFaxInbound(ctx, adminapi.FaxInboundRequest{
					From: a[0], To: a[1], Document: doc, Outcome: adminapi.FaxInboundOutcome(*outcome)})
			}
		}},
	{name: "fax-webhook-key", help: "print the fax webhook public key (base64 Ed25519)", maxArgs: -1,
		run: plainCall(adminapi.ClientInterface.GetFaxWebhookPublicKey)},
	{name: "fax-webhook-stats", help: "count fax webhook events by fate", maxArgs: -1,
		run: plainCall(adminapi.ClientInterface.GetFaxWebhookStats)},
}
