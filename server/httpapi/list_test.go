package httpapi

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
)

// seedList stores n memories in team a (one favorite every third, user u1 or
// u2 alternating, created a minute apart) and two in team b.
func seedList(t *testing.T, db *engram.DB, n int) []string {
	t.Helper()
	base := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var mems []*engram.Memory
	for i := range n {
		mems = append(mems, &engram.Memory{ID: fmt.Sprintf("a-%02d", i), Text: fmt.Sprintf("note %d about the release", i),
			Type: []string{"fact", "event"}[i%2], Tags: []string{"t" + fmt.Sprint(i%3)}, Favorite: i%3 == 0,
			Scope:     map[string]string{"team": "a", "user": fmt.Sprintf("u%d", 1+i%2)},
			CreatedAt: base.Add(time.Duration(i) * time.Minute), UpdatedAt: base.Add(time.Duration(n-i) * time.Minute)})
	}
	mems = append(mems, &engram.Memory{ID: "b-1", Text: "team b's note", Scope: map[string]string{"team": "b"}, CreatedAt: base},
		&engram.Memory{ID: "b-2", Text: "team b's other note", Scope: map[string]string{"team": "b", "user": "u1"}, CreatedAt: base})
	res, err := db.Add(t.Context(), mems...)
	if err != nil {
		t.Fatal(err)
	}
	return res.IDs
}

type page struct {
	Memories []struct {
		ID        string
		Uses      int
		Embedding map[string]any
	}
	NextCursor string `json:"next_cursor"`
}

func (p page) ids() []string {
	out := make([]string, len(p.Memories))
	for i, m := range p.Memories {
		out[i] = m.ID
	}
	return out
}

// TestListMemories: GET /v1/memories filters, orders and pages through a
// tenant's memories (cursor paging neither repeats nor skips one), never
// shows another tenant's, and refuses what it cannot do.
func TestListMemories(t *testing.T) {
	db := openDB(t, true)
	seedList(t, db, 25)
	_, ts := startServer(t, db, Config{Keys: testKeys})
	c := ts.Client()
	get := func(key string, q url.Values) page {
		t.Helper()
		var p page
		mustJSON(t, call(t, c, ts.URL, "GET", "/v1/memories?"+q.Encode(), key, nil), http.StatusOK, &p)
		return p
	}
	cases := []struct {
		name string
		key  string
		q    url.Values
		want []string
	}{
		{"newest first by default", keyA, url.Values{"limit": {"3"}}, []string{"a-24", "a-23", "a-22"}},
		{"oldest first", keyA, url.Values{"order": {"created_at"}, "limit": {"2"}}, []string{"a-00", "a-01"}},
		{"recently updated first", keyA, url.Values{"order": {"-updated_at"}, "limit": {"2"}}, []string{"a-00", "a-01"}},
		{"by id", keyA, url.Values{"order": {"-id"}, "limit": {"2"}}, []string{"a-24", "a-23"}},
		{"type and scope", keyA, url.Values{"type": {"event"}, "scope": {"user=u2"}, "limit": {"3"}}, []string{"a-23", "a-21", "a-19"}},
		{"tags, repeated parameter", keyA, url.Values{"tag": {"t0"}, "order": {"id"}, "limit": {"3"}}, []string{"a-00", "a-03", "a-06"}},
		{"since an absolute time", keyA, url.Values{"since": {"2026-03-01T09:23:00Z"}}, []string{"a-24", "a-23"}},
		{"since an age: nothing that old is new", keyA, url.Values{"since": {"7d"}}, []string{}},
		{"the other tenant sees its own only", keyB, url.Values{"order": {"id"}}, []string{"b-1", "b-2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := get(tc.key, tc.q).ids(); !slices.Equal(got, tc.want) {
				t.Fatalf("ids %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("cursor paging visits every memory once, in order", func(t *testing.T) {
		for _, order := range []string{"-created_at", "uses", "-updated_at"} {
			var seen []string
			q := url.Values{"limit": {"4"}, "order": {order}}
			pages := 0
			for {
				p := get(keyA, q)
				seen = append(seen, p.ids()...)
				pages++
				if p.NextCursor == "" {
					break
				}
				if pages > 10 {
					t.Fatal("paging does not end")
				}
				q.Set("cursor", p.NextCursor)
			}
			sorted := slices.Clone(seen)
			slices.Sort(sorted)
			if len(seen) != 25 || len(slices.Compact(sorted)) != 25 || pages != 7 {
				t.Fatalf("order %s: %d pages, %d memories (%d distinct), want 7 pages of 25 distinct", order, pages, len(seen), len(slices.Compact(sorted)))
			}
		}
	})
	t.Run("memories come without their vectors", func(t *testing.T) {
		p := get(keyA, url.Values{"limit": {"1"}})
		if e := p.Memories[0].Embedding; e["model"] == nil || e["vector"] != nil {
			t.Fatalf("embedding %v: want the model without the vector", e)
		}
	})
	for _, bad := range []struct {
		name   string
		key    string
		query  string
		status int
		want   string
	}{
		{"unknown parameter", keyA, "colour=red", 400, "colour"},
		{"bad order", keyA, "order=size", 400, "order"},
		{"bad limit", keyA, "limit=0", 400, "limit"},
		{"limit above the maximum", keyA, "limit=5000", 400, "maximum"},
		{"bad cursor", keyA, "cursor=zzz", 400, "cursor"},
		{"cursor not URL-encoded", keyA, "cursor=%%%", 400, "%%%"},
		{"bad escape in the query", keyA, "order=id&scope=user%zz", 400, "query string"},
		{"bad since", keyA, "since=yesterday", 400, "since"},
		{"another tenant's scope", keyA, "scope=team=b", 403, "outside"},
		{"no key", "", "", 401, ""},
	} {
		t.Run(bad.name, func(t *testing.T) {
			r := call(t, c, ts.URL, "GET", "/v1/memories?"+bad.query, bad.key, nil)
			if r.status != bad.status || !strings.Contains(string(r.body), bad.want) {
				t.Fatalf("%d %s, want %d naming %q", r.status, r.body, bad.status, bad.want)
			}
		})
	}
	t.Run("a cursor of another order", func(t *testing.T) {
		p := get(keyA, url.Values{"limit": {"2"}})
		r := call(t, c, ts.URL, "GET", "/v1/memories?order=id&cursor="+p.NextCursor, keyA, nil)
		if r.status != 400 || !strings.Contains(string(r.body), "order") {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}

// TestListSameIDInScopes: GET /v1/memories pages through one id in several
// scopes (of the tenant) in every order, each memory once, and the cursor
// never returns the same page.
func TestListSameIDInScopes(t *testing.T) {
	db := openDB(t, false)
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	_, err := db.Add(t.Context(),
		&engram.Memory{ID: "same", Text: "one", Scope: map[string]string{"team": "a"}, CreatedAt: at},
		&engram.Memory{ID: "same", Text: "two", Scope: map[string]string{"team": "a", "user": "u1"}, CreatedAt: at},
		&engram.Memory{ID: "same", Text: "three", Scope: map[string]string{"team": "a", "user": "u2"}, CreatedAt: at},
		&engram.Memory{ID: "same", Text: "team b's", Scope: map[string]string{"team": "b"}, CreatedAt: at},
		&engram.Memory{ID: "other", Text: "four", Scope: map[string]string{"team": "a"}, CreatedAt: at})
	if err != nil {
		t.Fatal(err)
	}
	_, ts := startServer(t, db, Config{Keys: testKeys})
	for _, order := range engram.ListOrders {
		var texts []string
		q := url.Values{"limit": {"1"}, "order": {order}}
		for pages := 0; ; pages++ {
			if pages > 5 {
				t.Fatalf("order %s: more than 5 pages for 4 memories: %q", order, texts)
			}
			var p struct {
				Memories []struct{ Text string }
				Next     string `json:"next_cursor"`
			}
			mustJSON(t, call(t, ts.Client(), ts.URL, "GET", "/v1/memories?"+q.Encode(), keyA, nil), http.StatusOK, &p)
			for _, m := range p.Memories {
				texts = append(texts, m.Text)
			}
			if p.Next == "" {
				break
			}
			q.Set("cursor", p.Next)
		}
		slices.Sort(texts)
		if want := []string{"four", "one", "three", "two"}; !slices.Equal(texts, want) {
			t.Errorf("order %s: listed %q, want each of %q once", order, texts, want)
		}
	}
}

// TestDeleteByScope: DELETE /v1/memories?scope=... forgets every memory of
// the pairs given, counts them, and never reaches outside the caller's key.
func TestDeleteByScope(t *testing.T) {
	db := openDB(t, false)
	seedList(t, db, 10) // team a: u1 has 5, u2 has 5; team b: b-1, b-2 (u1)
	_, ts := startServer(t, db, Config{Keys: testKeys})
	c := ts.Client()
	del := func(key, scope string) reply {
		t.Helper()
		return call(t, c, ts.URL, "DELETE", "/v1/memories?"+url.Values{"scope": {scope}}.Encode(), key, nil)
	}
	var n struct{ Deleted int }
	mustJSON(t, del(keyA, "user=u1"), http.StatusOK, &n)
	if n.Deleted != 5 {
		t.Fatalf("deleted %d, want team a's 5 memories of u1", n.Deleted)
	}
	if m, err := db.Get(t.Context(), "b-2"); err != nil || m == nil {
		t.Fatalf("team b's memory of user u1 went too: %v", err)
	}
	mustJSON(t, del(keyA, "user=u1"), http.StatusOK, &n)
	if n.Deleted != 0 {
		t.Fatalf("second delete: %d", n.Deleted)
	}
	for _, bad := range []struct {
		name, key, path string
		status          int
	}{
		{"another tenant's scope", keyA, "/v1/memories?scope=team=b", 403},
		{"no scope", keyA, "/v1/memories", 400},
		{"empty scope", keyA, "/v1/memories?scope=", 400},
		{"bad scope", keyA, "/v1/memories?scope=user", 400},
		{"unknown parameter", keyA, "/v1/memories?scope=user=u2&every=1", 400},
		{"scope and all", keyA, "/v1/memories?scope=user=u2&all=1", 400},
		{"all not a boolean", keyA, "/v1/memories?all=everything", 400},
		{"all twice", keyA, "/v1/memories?all=true&all=true", 400},
		{"all=false and no scope", keyA, "/v1/memories?all=false", 400},
		{"all without a key", "", "/v1/memories?all=true", 401},
		{"no key", "", "/v1/memories?scope=user=u2", 401},
	} {
		t.Run(bad.name, func(t *testing.T) {
			if r := call(t, c, ts.URL, "DELETE", bad.path, bad.key, nil); r.status != bad.status {
				t.Fatalf("%d %s, want %d", r.status, r.body, bad.status)
			}
		})
	}
	if got := db.Count(); got != 7 {
		t.Fatalf("%d memories left, want 7 (the refused requests deleted something)", got)
	}
	// Team b's key forgets its whole tenant by naming its own scope.
	mustJSON(t, del(keyB, "team=b"), http.StatusOK, &n)
	if n.Deleted != 2 || db.Count() != 5 {
		t.Fatalf("tenant b deleted %d, %d left", n.Deleted, db.Count())
	}
	// all=true forgets the whole tenant of the key without naming it (the SDKs' reset()).
	mustJSON(t, call(t, c, ts.URL, "DELETE", "/v1/memories?all=true", keyA, nil), http.StatusOK, &n)
	if n.Deleted != 5 || db.Count() != 0 {
		t.Fatalf("all=true for team a deleted %d, %d left", n.Deleted, db.Count())
	}
}

// TestDeleteAllNeedsAKey: on a server without keys, all=true would be the
// whole store: it is refused, saying so, and deletes nothing.
func TestDeleteAllNeedsAKey(t *testing.T) {
	db := openDB(t, false)
	seedList(t, db, 10)
	_, ts := startServer(t, db, Config{})
	before := db.Count()
	r := call(t, ts.Client(), ts.URL, "DELETE", "/v1/memories?all=true", "", nil)
	if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "whole store") {
		t.Fatalf("%d %s, want 400 naming the whole store", r.status, r.body)
	}
	if got := db.Count(); got != before {
		t.Fatalf("%d memories left of %d", got, before)
	}
}

// TestDuplicatesMerged: the same text in the same scope, posted twice without
// an id, is stored once, and the second answer says it was merged.
func TestDuplicatesMerged(t *testing.T) {
	db := openDB(t, false)
	_, ts := startServer(t, db, Config{Keys: testKeys})
	c := ts.Client()
	var first, second, batch, other engram.AddResult
	mem := map[string]any{"text": "The user prefers dark themes.", "scope": map[string]string{"user": "u7"}}
	mustJSON(t, call(t, c, ts.URL, "POST", "/v1/memories", keyA, mem), http.StatusCreated, &first)
	mustJSON(t, call(t, c, ts.URL, "POST", "/v1/memories", keyA, mem), http.StatusCreated, &second)
	if len(first.Merged) != 0 || len(second.Merged) != 1 || second.Merged[0].ID != first.IDs[0] || second.IDs[0] != first.IDs[0] {
		t.Fatalf("first %+v, second %+v: want the second merged into the first", first, second)
	}
	mustJSON(t, call(t, c, ts.URL, "POST", "/v1/memories", keyA, map[string]any{"memories": []any{
		map[string]any{"text": "Lunch is at noon."}, map[string]any{"text": "Lunch is at noon."}}}), http.StatusCreated, &batch)
	if len(batch.Merged) != 1 || batch.Merged[0].Index != 1 || batch.IDs[1] != batch.IDs[0] {
		t.Fatalf("batch %+v: want its second memory merged into its first", batch)
	}
	// Another tenant's identical memory is its own.
	mustJSON(t, call(t, c, ts.URL, "POST", "/v1/memories", keyB, mem), http.StatusCreated, &other)
	if len(other.Merged) != 0 || other.IDs[0] == first.IDs[0] {
		t.Fatalf("tenant b's memory was merged into tenant a's: %+v", other)
	}
	if n := db.Count(); n != 3 {
		t.Fatalf("%d memories stored, want 3", n)
	}
}

// TestSearchTakesAges: since and until take the forms the CLI and MCP take
// (issue 13: "since": "7d" was refused), in search, inject and brief.
func TestSearchTakesAges(t *testing.T) {
	db := openDB(t, false)
	if _, err := db.Add(t.Context(), &engram.Memory{Text: "fresh note about the deploy"},
		&engram.Memory{Text: "old note about the deploy", CreatedAt: time.Now().Add(-30 * 24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	_, ts := startServer(t, db, Config{})
	c := ts.Client()
	for _, tc := range []struct {
		path string
		body string
		want int // results or items
	}{
		{"/v1/search", `{"query": "deploy note", "since": "7d"}`, 1},
		{"/v1/search", `{"query": "deploy note", "until": "7d"}`, 1},
		{"/v1/search", `{"query": "deploy note", "since": "2000-01-01"}`, 2},
		{"/v1/search", `{"query": "deploy note", "since": "48h", "until": "1h"}`, 0},
		{"/v1/brief", `{"since": "7d"}`, 1},
	} {
		var out struct {
			Results []any
			Items   []any
		}
		mustJSON(t, call(t, c, ts.URL, "POST", tc.path, "", tc.body), http.StatusOK, &out)
		if got := len(out.Results) + len(out.Items); got != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.path, tc.body, got, tc.want)
		}
	}
	if r := call(t, c, ts.URL, "POST", "/v1/search", "", `{"query": "x", "since": "last tuesday"}`); r.status != 400 || !strings.Contains(string(r.body), `since`) {
		t.Fatalf("bad since: %d %s", r.status, r.body)
	}
}

// TestFavoriteBody: the favorite route takes "favorite", as every other
// interface does, and still the first spelling "on".
func TestFavoriteBody(t *testing.T) {
	db := openDB(t, false)
	if _, err := db.Add(t.Context(), &engram.Memory{ID: "m1", Text: "x"}); err != nil {
		t.Fatal(err)
	}
	_, ts := startServer(t, db, Config{})
	c := ts.Client()
	for _, tc := range []struct {
		body   string
		status int
		want   bool
	}{
		{`{"favorite": true}`, 200, true},
		{`{"favorite": false}`, 200, false},
		{`{"on": true}`, 200, true},
		{`{"on": false}`, 200, false},
		{``, 200, true},
		{`{"favorite": true, "on": false}`, 400, false},
	} {
		r := call(t, c, ts.URL, "POST", "/v1/memories/m1/favorite", "", tc.body)
		var m struct{ Favorite bool }
		if r.status != tc.status {
			t.Fatalf("%s: %d %s", tc.body, r.status, r.body)
		}
		if tc.status == 200 {
			mustJSON(t, r, 200, &m)
			if m.Favorite != tc.want {
				t.Fatalf("%s: favorite %v", tc.body, m.Favorite)
			}
		}
	}
}

// TestAccessLog: one line per request with its method, path and status, and
// no body, query string, memory text or key.
func TestAccessLog(t *testing.T) {
	var buf bytes.Buffer
	db := openDB(t, false)
	_, ts := startServer(t, db, Config{Keys: testKeys, AccessLog: slog.New(slog.NewJSONHandler(&buf, nil))})
	c := ts.Client()
	secret := "the vault code is 4242"
	call(t, c, ts.URL, "POST", "/v1/memories", keyA, map[string]any{"text": secret})
	call(t, c, ts.URL, "GET", "/v1/memories?scope=user=u9", keyA, nil)
	call(t, c, ts.URL, "GET", "/v1/stats", "", nil)
	log := buf.String()
	if n := strings.Count(log, "\n"); n != 3 {
		t.Fatalf("%d lines, want 3:\n%s", n, log)
	}
	for _, want := range []string{`"method":"POST"`, `"path":"/v1/memories"`, `"status":201`, `"status":401`} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %s:\n%s", want, log)
		}
	}
	for _, never := range []string{secret, keyA, "u9"} {
		if strings.Contains(log, never) {
			t.Errorf("log holds %q:\n%s", never, log)
		}
	}
}
