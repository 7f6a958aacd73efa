package restaurant

// PlainItems is plainItems, for the package's external tests.
var PlainItems = plainItems

// PagesGeneration is the generation of s's cached list pages and entity
// documents: each moves on when they are dropped.
func PagesGeneration(s *Server) (pages, entities uint64) {
	return s.store.pages.Generation(), s.store.entities.Generation()
}
