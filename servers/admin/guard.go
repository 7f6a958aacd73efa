package admin

import (
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/apistack/apistack/gen/adminapi"
	"github.com/apistack/apistack/servers/internal/failguard"
)

// guardTokens limits wrong admin tokens per source (failguard's defaults:
// 10 at once, then one per 6 seconds): a request bearing an Authorization
// header from a source that has used up its wrong tokens is refused 429
// too_many_requests with Retry-After before its token is compared, right
// or wrong; a wrong token counts against its source. Requests without the
// header (the docs, /healthz, the console's pages) are not counted.
func (s *Server) guardTokens(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header := r.Header.Get("Authorization")
		if header == "" {
			next.ServeHTTP(w, r)
			return
		}
		src := failguard.Source(r)
		if wait, blocked := s.wrongTokens.Blocked(src); blocked {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
			s.writeError(w, http.StatusTooManyRequests, adminapi.ErrorErrorTooManyRequests,
				fmt.Sprintf("too many wrong admin tokens from this address; try again in %d s", int(math.Ceil(wait.Seconds()))))
			return
		}
		if !s.bearerOK(header) {
			s.wrongTokens.Fail(src)
		}
		next.ServeHTTP(w, r)
	})
}
