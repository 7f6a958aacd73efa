package sandbox_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/sandboxapi"
)

func BenchmarkZZFixed(b *testing.B) {
	e := start(b, envOptions{pamRateLimit: 1 << 30})
	ctx := context.Background()
	sb := e.create(b, sandboxapi.CreateSandboxRequest{})
	for i := range 20 {
		_, err := sb.pam.CreateGroup(ctx, fmt.Sprintf("group-%02d", i))
		require.NoError(b, err)
	}
	token, err := sb.pam.Token(ctx)
	require.NoError(b, err)
	url := sb.Credentials.Pam.BaseUrl + "/v1/teams/" + sb.Credentials.Pam.Team + "/groups?count=20"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	e.st.Sandboxes.Journal().SetEnabled(os.Getenv("JMODE") == "on")
	b.ResetTimer()
	var wg sync.WaitGroup
	per := b.N / 4
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
}
