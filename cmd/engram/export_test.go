package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/engram-memory/engram/server/httpapi"
)

// TestClientExportCut: the CLI's export from a server exits non-zero, naming
// what it got, when the stream is cut: the connection aborted part-way (what
// the server does when an export fails after it started), a clean end without
// the completion trailer (what a proxy can make of it), or a trailer that
// counts other lines than arrived. A complete export still exits 0.
func TestClientExportCut(t *testing.T) {
	const lines = `{"id":"a","text":"one"}` + "\n" + `{"id":"b","text":"two"}` + "\n"
	for _, c := range []struct {
		name  string
		serve func(w http.ResponseWriter)
		code  int
		says  string
	}{
		{"complete", func(w http.ResponseWriter) {
			w.Header().Set("Trailer", httpapi.ExportCountTrailer)
			w.Write([]byte(lines))
			w.Header().Set(httpapi.ExportCountTrailer, "2")
		}, 0, ""},
		{"aborted", func(w http.ResponseWriter) {
			w.Header().Set("Trailer", httpapi.ExportCountTrailer)
			w.Write([]byte(lines + `{"id":"c","te`))
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}, 1, "cut short after 2 memories"},
		{"no trailer", func(w http.ResponseWriter) { w.Write([]byte(lines)) }, 1, "without the server's Engram-Export-Count trailer"},
		{"wrong count", func(w http.ResponseWriter) {
			w.Header().Set("Trailer", httpapi.ExportCountTrailer)
			w.Write([]byte(lines))
			w.Header().Set(httpapi.ExportCountTrailer, "3")
		}, 1, "holds 2 memories, the server sent 3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/v1/export" {
					http.NotFound(w, r)
					return
				}
				c.serve(w)
			}))
			defer ts.Close()
			out, errs, code := clientCLI(t, ts.URL, "", "", "export")
			if code != c.code || !strings.Contains(errs, c.says) {
				t.Fatalf("exit %d, stderr %q; want exit %d saying %q", code, errs, c.code, c.says)
			}
			if !strings.HasPrefix(out, lines) {
				t.Fatalf("stdout %q", out)
			}
		})
	}
}
