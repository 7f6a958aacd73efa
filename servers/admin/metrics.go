package admin

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/apistack/apistack/gen/adminapi"
)

// MetricsPath is where the admin port serves the Prometheus metrics.
const MetricsPath = "/metrics"

// withMetrics serves the telemetry's metrics at MetricsPath beside the admin
// API. A scraper on the machine itself (a loopback peer, which is every
// caller while the admin port stays on loopback, its default) needs no
// token: Prometheus is usually set up without one for a local target, and the
// metrics hold counts and latencies, no tenant data. Any other caller (the
// admin port opened with --admin-allow-remote) must send the admin bearer
// token, which a Prometheus scrape config gives as its authorization
// credentials. The peer is the TCP connection's address, never a forwarded
// header.
func (s *Server) withMetrics(api http.Handler) http.Handler {
	if s.cfg.Telemetry == nil {
		return api
	}
	metrics := s.cfg.Telemetry.Handler()
	mux := http.NewServeMux()
	mux.Handle(MetricsPath, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			s.writeError(w, http.StatusMethodNotAllowed, adminapi.ErrorErrorInvalidRequest, "GET /metrics")
			return
		}
		if !loopbackPeer(r) && !s.bearerOK(r.Header.Get("Authorization")) {
			w.Header().Set("WWW-Authenticate", "Bearer")
			s.writeError(w, http.StatusUnauthorized, adminapi.ErrorErrorUnauthorized,
				"off loopback, /metrics needs an Authorization: Bearer <admin token> header")
			return
		}
		metrics.ServeHTTP(w, r)
	}))
	mux.Handle("/", api)
	return mux
}

// bearerOK reports whether an Authorization header holds the admin token,
// comparing hashes in constant time.
func (s *Server) bearerOK(header string) bool {
	token, ok := strings.CutPrefix(header, "Bearer ")
	if !ok {
		return false
	}
	sum := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(sum[:], s.tokenHash[:]) == 1
}

// loopbackPeer reports whether the request came over a loopback connection.
func loopbackPeer(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	addr, err := netip.ParseAddr(host)
	return err == nil && addr.Unmap().IsLoopback()
}

// writeError answers with the admin API's error body.
func (s *Server) writeError(w http.ResponseWriter, status int, name adminapi.ErrorError, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(adminapi.Error{Code: status, Error: name, Message: message}); err != nil {
		s.logger.Warn("admin: write error response", "err", err)
	}
}
