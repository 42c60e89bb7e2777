package web

import (
	"bufio"
	"io"
	"time"

	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// exportCSP lets an exported page load and run nothing: its styles are
// inline, its images data: URLs, and whatever a session's content holds
// stays text, wherever the file is opened.
const exportCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

// Export writes session id's page as one self-contained file, as the web view
// shows it with every body unfolded: the styles inline, no script, no link to
// a server. dir is the session directory (for subagents' logs), reg presents
// the tools' cards, loc is the time zone (nil: time.Local).
func Export(w io.Writer, dir string, reg *tool.Registry, loc *time.Location, id string, recs []session.Record) error {
	if loc == nil {
		loc = time.Local
	}
	s := &Server{o: Options{Dir: dir, Registry: reg, Location: loc}}
	pg := s.layout(s.newBuilder(id, true), recs, false)
	pg.Export = true
	bw := bufio.NewWriterSize(w, 64<<10)
	out{bw}.session(pg)
	return bw.Flush()
}

func (o out) exportHead(title string) {
	o.raw("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" +
		"<meta http-equiv=\"Content-Security-Policy\" content=\"" + exportCSP + "\">\n" +
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>")
	o.esc(title)
	o.raw(" · dsh</title>\n<style>\n")
	a := assets()
	o.raw(string(a["style.css"].body))
	o.raw("\n")
	o.raw(string(a["chroma.css"].body))
	o.raw("</style>\n</head>\n")
}
