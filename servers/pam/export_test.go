package pam

import (
	"net/http"

	"github.com/apistack/apistack/servers/internal/rights"
)

// HandlerWithRights is s's Handler with the operations authorized by table
// instead of the embedded spec's, for the tests that edit the rights.
func HandlerWithRights(s *Server, table *rights.Table) (http.Handler, error) {
	return s.handlerWith(table)
}

// RenderedGeneration is the generation of s's rendered list pages: it moves
// on each time they are dropped.
func RenderedGeneration(s *Server) uint64 { return s.rendered.Generation() }
