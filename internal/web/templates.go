package web

import (
	"embed"
	"html/template"
	"sync"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// templates render every page and every fragment the event stream sends; the
// fragments are the very templates the pages use, so live equals reloaded.
var templates = sync.OnceValue(func() *template.Template {
	return must(template.New("").ParseFS(templateFS, "templates/*.html"))
})
