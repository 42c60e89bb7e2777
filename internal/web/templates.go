package web

import (
	"embed"
	"html/template"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// templates render every page and every fragment the event stream sends; the
// fragments are the very templates the pages use, so live equals reloaded.
var templates = must(template.New("").ParseFS(templateFS, "templates/*.html"))
