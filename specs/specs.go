// Package specs embeds the hand-written OpenAPI documents, so every server can
// serve its own spec at /openapi.yaml exactly as written.
package specs

import "embed"

// FS holds specs/<api>/openapi.yaml (and the fax webhooks spec and the
// lifecycle XSD when present).
//
//go:embed */*.yaml
var FS embed.FS
