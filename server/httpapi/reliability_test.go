package httpapi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram"
)

// failingExport is a Backend whose export fails after the real one has
// written everything: the store failing part-way through a long stream.
type failingExport struct{ Backend }

func (f failingExport) Export(ctx context.Context, w io.Writer) error {
	if err := f.Backend.Export(ctx, w); err != nil {
		return err
	}
	return errors.New("disk read error")
}

// nanStats answers a value JSON cannot hold.
type nanStats struct{ Backend }

func (nanStats) Stats(context.Context) (engram.Stats, error) {
	return engram.Stats{VectorWeight: math.NaN()}, nil
}

// TestExportFailureIsVisible: a complete export ends with the line count in a
// trailer; one that fails after the stream started aborts the connection
// instead of ending cleanly, so no client takes it for complete.
func TestExportFailureIsVisible(t *testing.T) {
	db := openDB(t, false)
	var mems []*engram.Memory
	for i := range 300 {
		mems = append(mems, &engram.Memory{Text: fmt.Sprintf("memory %d with enough text to fill the buffers of the stream", i)})
	}
	if _, err := db.Add(t.Context(), mems...); err != nil {
		t.Fatal(err)
	}
	s, ts := startServer(t, db, Config{})
	resp, err := ts.Client().Get(ts.URL + "/v1/export")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.Trailer.Get(ExportCountTrailer) != "300" || strings.Count(string(body), "\n") != 300 {
		t.Fatalf("complete export: %d lines, trailer %q, %v", strings.Count(string(body), "\n"), resp.Trailer.Get(ExportCountTrailer), err)
	}
	s.open.b = failingExport{s.open.b}
	resp, err = ts.Client().Get(ts.URL + "/v1/export")
	if err != nil {
		t.Fatal(err)
	}
	body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil {
		t.Fatalf("a failed export ended cleanly (%d bytes, trailer %q)", len(body), resp.Trailer.Get(ExportCountTrailer))
	}
	if resp.Trailer.Get(ExportCountTrailer) != "" {
		t.Fatal("a failed export carries the completion trailer")
	}
}

// TestNoEmptySuccess: an answer that cannot be encoded is a 500 with an error
// body, never a 200 with an empty body; a weight that would overflow the
// score is refused up front.
func TestNoEmptySuccess(t *testing.T) {
	s, ts := startServer(t, openDB(t, false), Config{})
	c := ts.Client()
	if r := call(t, c, ts.URL, "POST", "/v1/search", "", map[string]any{"query": "x", "vector_weight": 1e308}); r.status != http.StatusBadRequest {
		t.Fatalf("vector_weight 1e308: %d %s", r.status, r.body)
	}
	s.open.b = nanStats{s.open.b}
	r := call(t, c, ts.URL, "GET", "/v1/stats", "", nil)
	if r.status != http.StatusInternalServerError || r.errCode() != CodeInternal {
		t.Fatalf("an answer JSON cannot hold: %d %q", r.status, r.body)
	}
}

// TestImportTrickleCut: an import body that trickles in (a byte every few
// hundred milliseconds) is cut once it falls behind the minimum rate after
// the grace, instead of holding the request open past every timeout.
func TestImportTrickleCut(t *testing.T) {
	_, ts := startServer(t, openDB(t, false), Config{RequestTimeout: 500 * time.Millisecond})
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/import HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-ndjson\r\nContent-Length: 1000\r\n\r\n")
	start := time.Now()
	done := make(chan string, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			done <- "connection closed: " + err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		done <- fmt.Sprintf("%d %s", resp.StatusCode, b)
	}()
	for {
		select {
		case got := <-done:
			if el := time.Since(start); el > 10*time.Second {
				t.Fatalf("cut after %v: %s", el, got)
			}
			if strings.HasPrefix(got, "200") {
				t.Fatalf("a trickled import succeeded: %s", got)
			}
			return
		case <-time.After(300 * time.Millisecond):
			if _, err := conn.Write([]byte("{")); err != nil {
				return // the server closed the connection
			}
			if time.Since(start) > 20*time.Second {
				t.Fatal("the trickled import is still open after 20s")
			}
		}
	}
}

// TestImportLineTooLong: an import line over the limit is a 413 naming the
// line, not a 500.
func TestImportLineTooLong(t *testing.T) {
	_, ts := startServer(t, openDB(t, false), Config{})
	body := `{"text":"short"}` + "\n" + `{"text":"` + strings.Repeat("x", engram.MaxLineBytes) + `"}` + "\n"
	r := call(t, ts.Client(), ts.URL, "POST", "/v1/import", "", body)
	if r.status != http.StatusRequestEntityTooLarge || r.errCode() != CodeTooLarge || !strings.Contains(string(r.body), "line 2") {
		t.Fatalf("%d %s", r.status, r.body)
	}
}

// TestSimpleRequestTypesRefused: JSON sent as text/plain (or a form), which a
// browser sends cross-site without asking, is refused; application/json and
// no type are served.
func TestSimpleRequestTypesRefused(t *testing.T) {
	_, ts := startServer(t, openDB(t, false), Config{})
	for _, c := range []struct {
		path, ctype string
		want        int
	}{
		{"/v1/memories", "text/plain", http.StatusUnsupportedMediaType},
		{"/v1/memories", "text/plain; charset=utf-8", http.StatusUnsupportedMediaType},
		{"/v1/memories", "application/x-www-form-urlencoded", http.StatusUnsupportedMediaType},
		{"/v1/import", "text/plain", http.StatusUnsupportedMediaType},
		{"/v1/memories", "application/json", http.StatusCreated},
		{"/v1/memories", "", http.StatusCreated},
		{"/v1/import", "application/x-ndjson", http.StatusOK},
	} {
		body := `{"text":"sent as ` + c.ctype + `"}`
		req, _ := http.NewRequest("POST", ts.URL+c.path, strings.NewReader(body))
		if c.ctype != "" {
			req.Header.Set("Content-Type", c.ctype)
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s as %q: %d, want %d", c.path, c.ctype, resp.StatusCode, c.want)
		}
	}
}

// TestRaceSameIDOverHTTP: two keys POST the same new id at once, 200 times:
// both are acknowledged every time, and each keeps its own memory (before,
// both got 201 in 27 of 200 races and the later replaced the earlier).
func TestRaceSameIDOverHTTP(t *testing.T) {
	_, ts := startServer(t, openDB(t, false), Config{Keys: testKeys})
	c := ts.Client()
	for i := range 200 {
		id := fmt.Sprintf("same-%d", i)
		var wg sync.WaitGroup
		var ra, rb reply
		var ea, eb error
		start := make(chan struct{})
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			ra, ea = send(c, ts.URL, "POST", "/v1/memories", keyA, map[string]any{"id": id, "text": "A's"})
		}()
		go func() {
			defer wg.Done()
			<-start
			rb, eb = send(c, ts.URL, "POST", "/v1/memories", keyB, map[string]any{"id": id, "text": "B's"})
		}()
		close(start)
		wg.Wait()
		if ea != nil || eb != nil || ra.status != http.StatusCreated || rb.status != http.StatusCreated {
			t.Fatalf("round %d: %v %d %s / %v %d %s", i, ea, ra.status, ra.body, eb, rb.status, rb.body)
		}
		for key, want := range map[string]string{keyA: "A's", keyB: "B's"} {
			var m engram.Memory
			mustJSON(t, call(t, c, ts.URL, "GET", "/v1/memories/"+id, key, nil), http.StatusOK, &m)
			if m.Text != want {
				t.Fatalf("round %d: %s's memory is %q", i, key[:5], m.Text)
			}
		}
	}
}

// TestAmbiguousIDNamedByScope: a parent key whose children hold the same id
// gets 409 ambiguous by id alone, and reaches each with ?scope=.
func TestAmbiguousIDNamedByScope(t *testing.T) {
	keys := []Key{
		{Key: keyA, Scope: map[string]string{"team": "a"}},
		{Key: keyA + "-u1", Scope: map[string]string{"team": "a", "user": "u1"}},
		{Key: keyA + "-u2", Scope: map[string]string{"team": "a", "user": "u2"}},
	}
	_, ts := startServer(t, openDB(t, false), Config{Keys: keys})
	c := ts.Client()
	for _, k := range keys[1:] {
		mustJSON(t, call(t, c, ts.URL, "POST", "/v1/memories", k.Key, map[string]any{"id": "note", "text": "written by " + k.Scope["user"]}), http.StatusCreated, nil)
	}
	if r := call(t, c, ts.URL, "GET", "/v1/memories/note", keyA, nil); r.status != http.StatusConflict || r.errCode() != CodeAmbiguous {
		t.Fatalf("the parent's GET of an id two children hold: %d %s", r.status, r.body)
	}
	var m engram.Memory
	mustJSON(t, call(t, c, ts.URL, "GET", "/v1/memories/note?scope=user=u2", keyA, nil), http.StatusOK, &m)
	if m.Text != "written by u2" {
		t.Fatalf("?scope=user=u2: %+v", m)
	}
	mustJSON(t, call(t, c, ts.URL, "DELETE", "/v1/memories/note?scope=user%3Du1", keyA, nil), http.StatusOK, nil)
	mustJSON(t, call(t, c, ts.URL, "GET", "/v1/memories/note", keyA, nil), http.StatusOK, &m)
	if m.Text != "written by u2" {
		t.Fatalf("after deleting u1's, the parent's note is %+v", m)
	}
	if r := call(t, c, ts.URL, "GET", "/v1/memories/note?scope=team=b", keyA, nil); r.status != http.StatusForbidden {
		t.Fatalf("?scope outside the key's: %d %s", r.status, r.body)
	}
	if r := call(t, c, ts.URL, "GET", "/v1/memories/note?scope=user=u1", keyA+"-u2", nil); r.status != http.StatusForbidden {
		t.Fatalf("a child naming its sibling's scope: %d %s", r.status, r.body)
	}
}

// TestDeleteByScopeSharedID: a child key that stores one id in two of its
// sessions cannot block its parent's "forget this user": DELETE
// /v1/memories?scope=user=u1 deletes every memory inside, whatever their
// ids, and nothing of the sibling or the other tenant.
func TestDeleteByScopeSharedID(t *testing.T) {
	keys := []Key{
		{Key: keyA, Scope: map[string]string{"team": "a"}},
		{Key: keyA + "-u1", Scope: map[string]string{"team": "a", "user": "u1"}},
		{Key: keyA + "-u2", Scope: map[string]string{"team": "a", "user": "u2"}},
		{Key: keyB, Scope: map[string]string{"team": "b"}},
	}
	db := openDB(t, false)
	_, ts := startServer(t, db, Config{Keys: keys})
	c := ts.Client()
	for _, w := range []struct{ key, session string }{{keyA + "-u1", "s1"}, {keyA + "-u1", "s2"}, {keyA + "-u2", "s1"}, {keyB, "s1"}} {
		mustJSON(t, call(t, c, ts.URL, "POST", "/v1/memories", w.key,
			map[string]any{"id": "note", "text": "a note", "scope": map[string]string{"session": w.session}}), http.StatusCreated, nil)
	}
	var n struct{ Deleted int }
	mustJSON(t, call(t, c, ts.URL, "DELETE", "/v1/memories?scope=user%3Du1", keyA, nil), http.StatusOK, &n)
	if n.Deleted != 2 || db.Count() != 2 {
		t.Fatalf("forgetting user u1 deleted %d, %d left; want 2 and 2", n.Deleted, db.Count())
	}
	for _, key := range []string{keyA + "-u2", keyB} {
		mustJSON(t, call(t, c, ts.URL, "GET", "/v1/memories/note", key, nil), http.StatusOK, nil)
	}
}

// TestScopeWhitespace: a scope value with surrounding whitespace is refused
// on every path of the API with one line naming it, never trimmed into a
// sibling's: a parent's ?scope=team=a%20 once deleted team a's memories.
// A key file with such a scope is refused at start.
func TestScopeWhitespace(t *testing.T) {
	db := openDB(t, false)
	keyP := "key-parent-0123456789"
	_, ts := startServer(t, db, Config{Keys: []Key{{Key: keyP, Scope: map[string]string{"org": "o"}}}})
	c := ts.Client()
	for i := range 3 {
		mustJSON(t, call(t, c, ts.URL, "POST", "/v1/memories", keyP,
			map[string]any{"id": fmt.Sprintf("m%d", i), "text": "team a's note", "scope": map[string]string{"team": "a"}}), http.StatusCreated, nil)
	}
	const named = `team=\"a \"`
	for _, r := range []struct {
		name, method, path string
		body               any
	}{
		{"delete by scope", "DELETE", "/v1/memories?scope=team=a%20", nil},
		{"list", "GET", "/v1/memories?scope=team%3Da%20", nil},
		{"by id", "GET", "/v1/memories/m0?scope=team=a%20", nil},
		{"add", "POST", "/v1/memories", map[string]any{"text": "x", "scope": map[string]string{"team": "a "}}},
		{"search", "POST", "/v1/search", map[string]any{"query": "note", "scope": map[string]string{"team": "a "}}},
		{"brief", "POST", "/v1/brief", map[string]any{"scope": map[string]string{"team": "a "}}},
		{"import", "POST", "/v1/import", `{"text":"x","scope":{"team":"a "}}` + "\n"},
		{"update", "PATCH", "/v1/memories/m0", map[string]any{"scope": map[string]string{"team": "a "}}},
	} {
		t.Run(r.name, func(t *testing.T) {
			got := call(t, c, ts.URL, r.method, r.path, keyP, r.body)
			if got.status != http.StatusBadRequest || !strings.Contains(string(got.body), named) {
				t.Fatalf("%d %s, want 400 naming %s", got.status, got.body, named)
			}
		})
	}
	if n := db.Count(); n != 3 {
		t.Fatalf("%d memories left, want team a's 3", n)
	}
	if _, err := New(db, Config{Keys: []Key{{Key: keyP, Scope: map[string]string{"team": "a "}}}}); err == nil || !strings.Contains(err.Error(), `team="a "`) {
		t.Fatalf("a key whose scope has a trailing space: %v", err)
	}
}

// TestPoisonCounter is issue 14's first finding, request by request: a
// client-supplied use count at the int64 maximum is refused (POST and
// import), one at the largest valid count is accepted and its next delivery
// saturates instead of overflowing, and every tenant's searches, the export
// and a reopen of the file keep working.
func TestPoisonCounter(t *testing.T) {
	path := t.TempDir() + "/poison.db"
	db, err := engram.Open(t.Context(), path, engram.Options{NoEmbedder: true})
	if err != nil {
		t.Fatal(err)
	}
	_, ts := startServer(t, db, Config{Keys: testKeys})
	c := ts.Client()
	r := call(t, c, ts.URL, "POST", "/v1/memories", keyA, map[string]any{"text": "poison pill", "uses": int64(math.MaxInt64)})
	if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), `\"uses\"`) {
		t.Fatalf("uses at the int64 maximum: %d %s", r.status, r.body)
	}
	r = call(t, c, ts.URL, "POST", "/v1/import", keyA, `{"text": "poison pill", "uses": 9223372036854775807}`+"\n")
	if r.status != http.StatusBadRequest {
		t.Fatalf("import with uses at the int64 maximum: %d %s", r.status, r.body)
	}
	mustJSON(t, call(t, c, ts.URL, "POST", "/v1/memories", keyA, map[string]any{"text": "poison pill at the top", "uses": int64(1 << 53)}), http.StatusCreated, nil)
	mustJSON(t, call(t, c, ts.URL, "POST", "/v1/memories", keyB, map[string]any{"text": "team b's pill"}), http.StatusCreated, nil)
	for range 2 {
		for _, key := range []string{keyA, keyB} {
			mustJSON(t, call(t, c, ts.URL, "POST", "/v1/search", key, map[string]any{"query": "pill"}), http.StatusOK, nil)
		}
	}
	exp := call(t, c, ts.URL, "GET", "/v1/export", keyA, nil)
	if got := readJSONL(t, exp.body); len(got) != 1 || got[0].Uses != 1<<53 {
		t.Fatalf("after two deliveries: %s", exp.body)
	}
	ts.Close()
	db.Close()
	again, err := engram.Open(t.Context(), path, engram.Options{NoEmbedder: true})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer again.Close()
	var out strings.Builder
	if err := again.Export(t.Context(), &out); err != nil || strings.Count(out.String(), "\n") != 2 {
		t.Fatalf("export after reopening: %v\n%s", err, out.String())
	}
}
