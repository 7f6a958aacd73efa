package stack_test

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/stack"
)

// serveHandlers serves each of st's handlers on a loopback port until the
// test ends, tells st its URLs and returns them by API name.
func serveHandlers(t *testing.T, st *stack.Stack) map[string]string {
	t.Helper()
	handlers, err := st.Handlers()
	require.NoError(t, err)
	urls := map[string]string{}
	for name, h := range handlers {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		urls[name] = srv.URL
	}
	require.NoError(t, st.SetURLs(urls))
	return urls
}
