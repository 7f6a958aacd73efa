package main

import (
	"fmt"
	"io"

	"github.com/apistack/apistack/servers/stack"
)

// printFaxDemo prints the fax API's lines of the demo banner: a send line
// whose document is the admin port's sample PDF and a line to watch the
// events arrive in the admin port's webhook inbox, so the demo works offline.
func printFaxDemo(w io.Writer, f *faxCredentials, a *adminCredentials) {
	if f == nil || a == nil {
		return
	}
	fmt.Fprintf(w, "fax        %s  (docs: %s/docs/)\n", f.BaseURL, f.BaseURL)
	fmt.Fprintf(w, "  send:    curl -s -X POST %s/v2/faxes -H 'Authorization: Bearer %s' --data-urlencode 'media_url=%s%s' --data-urlencode 'connection_id=%s' --data-urlencode 'to=+13125550800' --data-urlencode 'from=%s'\n",
		f.BaseURL, f.APIKey, a.BaseURL, faxSamplePath, f.ConnectionID, f.From)
	fmt.Fprintf(w, "  list:    curl -s %s/v2/faxes -H 'Authorization: Bearer %s'\n", f.BaseURL, f.APIKey)
	fmt.Fprintf(w, "  webhooks: curl -s %s%s -H 'Authorization: Bearer %s'  # the +1 312 555 08NN test numbers choose outcomes (docs/apis.md, Fax)\n", a.BaseURL, faxInboxPath, a.Token)
}

// The admin port's fax demo routes (servers/stack).
const (
	faxSamplePath = stack.FaxSamplePath
	faxInboxPath  = stack.FaxInboxPath
)
