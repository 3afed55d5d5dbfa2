package httpapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// loadDoc parses the embedded OpenAPI document.
func loadDoc(tb testing.TB) map[string]any {
	tb.Helper()
	var doc map[string]any
	if err := json.Unmarshal(OpenAPI(), &doc); err != nil {
		tb.Fatalf("openapi.json: %v", err)
	}
	if doc["openapi"] != "3.1.0" {
		tb.Fatalf("openapi version %v", doc["openapi"])
	}
	return doc
}

// docOp is one operation of the document.
type docOp struct {
	method, path string
	op           map[string]any
}

// docOps are the document's operations of the API's own routes: a handler
// mounted beside them (x-mounted, such as /mcp) is left out.
func docOps(doc map[string]any) []docOp {
	var out []docOp
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			if method == "parameters" {
				continue
			}
			if m, _ := op.(map[string]any)["x-mounted"].(bool); m {
				continue
			}
			out = append(out, docOp{strings.ToUpper(method), path, op.(map[string]any)})
		}
	}
	return out
}

// TestOpenAPIMatchesRoutes: every operation of the document is a route of the
// server and every route is in the document.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	doc := loadDoc(t)
	s, err := New(openDB(t, false), Config{})
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, o := range docOps(doc) {
		documented = append(documented, o.method+" "+o.path)
	}
	sort.Strings(documented)
	if got := s.Routes(); strings.Join(got, "\n") != strings.Join(documented, "\n") {
		t.Fatalf("routes differ from openapi.json:\nserver:\n%s\ndocument:\n%s", strings.Join(got, "\n"), strings.Join(documented, "\n"))
	}
	// Public routes are exactly those the document exempts from security.
	for _, rt := range s.routes {
		for _, o := range docOps(doc) {
			if o.method == rt.method && o.path == rt.path {
				sec, set := o.op["security"].([]any)
				if public := set && len(sec) == 0; public != rt.public {
					t.Errorf("%s %s: public %v in the server, %v in the document", rt.method, rt.path, rt.public, public)
				}
			}
		}
	}
	// Every $ref resolves.
	vd := &validator{doc: doc}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				vd.resolve(ref)
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
}

// TestOpenAPIExamples sends every operation's example request to a real
// server, checks the example against its schema, and checks the answer
// against the documented response schema for its status.
func TestOpenAPIExamples(t *testing.T) {
	doc := loadDoc(t)
	vd := &validator{doc: doc}
	db := openDB(t, true)
	_, ts := startServer(t, db, Config{})
	ops := docOps(doc)
	// Writes first, deletion last, so the path examples exist when used.
	rank := func(o docOp) int {
		switch {
		case o.method == "POST" && o.path == "/v1/memories":
			return 0
		case o.method == "DELETE":
			return 2
		}
		return 1
	}
	sort.Slice(ops, func(i, j int) bool {
		if rank(ops[i]) != rank(ops[j]) {
			return rank(ops[i]) < rank(ops[j])
		}
		return ops[i].method+ops[i].path < ops[j].method+ops[j].path
	})
	idExample := vd.resolve("#/components/parameters/id")["example"].(string)
	for _, o := range ops {
		t.Run(o.method+" "+o.path, func(t *testing.T) {
			var body any
			if rb, ok := o.op["requestBody"].(map[string]any); ok {
				for ctype, media := range rb["content"].(map[string]any) {
					m := media.(map[string]any)
					ex, ok := m["example"]
					if !ok {
						t.Fatalf("%s: no example request", ctype)
					}
					if ctype == "application/json" {
						if errs := vd.validate(m["schema"].(map[string]any), ex, "example"); len(errs) > 0 {
							t.Fatalf("example does not match its schema: %v", errs)
						}
						body = ex
					} else {
						body = ex.(string)
						for _, line := range strings.Split(strings.TrimSpace(ex.(string)), "\n") {
							v, err := decodeAny([]byte(line))
							if err != nil {
								t.Fatal(err)
							}
							if errs := vd.validate(vd.resolve("#/components/schemas/MemoryInput"), v, "example"); len(errs) > 0 {
								t.Fatalf("example line does not match MemoryInput: %v", errs)
							}
						}
					}
				}
			}
			path := strings.ReplaceAll(o.path, "{id}", idExample)
			q := url.Values{}
			params, _ := o.op["parameters"].([]any)
			// deleteScope needs scope or all=true, which the document cannot
			// say of two optional parameters: its scope example is used.
			oneOf := o.op["operationId"] == "deleteScope"
			for _, p := range params {
				pm := p.(map[string]any)
				if ex, ok := pm["example"].(string); ok && pm["in"] == "query" && (pm["required"] == true || oneOf) {
					q.Set(pm["name"].(string), ex)
				}
			}
			if len(q) > 0 {
				path += "?" + q.Encode()
			}
			r := call(t, ts.Client(), ts.URL, o.method, path, "", body)
			if r.status >= 300 {
				t.Fatalf("example answered %d: %s", r.status, r.body)
			}
			resp, ok := o.op["responses"].(map[string]any)[strconv.Itoa(r.status)].(map[string]any)
			if !ok {
				t.Fatalf("status %d is not documented", r.status)
			}
			for ctype, media := range resp["content"].(map[string]any) {
				if !strings.HasPrefix(r.header.Get("Content-Type"), ctype) {
					t.Fatalf("Content-Type %q, documented %q", r.header.Get("Content-Type"), ctype)
				}
				schema := media.(map[string]any)["schema"].(map[string]any)
				docs := [][]byte{r.body}
				if ctype == "application/x-ndjson" {
					docs = nil
					sc := bufio.NewScanner(bytes.NewReader(r.body))
					for sc.Scan() {
						docs = append(docs, append([]byte(nil), sc.Bytes()...))
					}
					if len(docs) == 0 {
						t.Fatal("empty stream")
					}
				}
				for _, d := range docs {
					v, err := decodeAny(d)
					if err != nil {
						t.Fatal(err)
					}
					if errs := vd.validate(schema, v, "response"); len(errs) > 0 {
						t.Fatalf("response does not match its schema: %v\n%s", errs, d)
					}
				}
			}
		})
	}
}

// TestErrorsMatchSchema checks error answers against the Error schema.
func TestErrorsMatchSchema(t *testing.T) {
	doc := loadDoc(t)
	vd := &validator{doc: doc}
	_, ts := startServer(t, openDB(t, false), Config{Keys: testKeys})
	for _, tc := range []struct{ method, path, key, body string }{
		{"GET", "/v1/stats", "", ""},
		{"GET", "/v1/memories/x", keyA, ""},
		{"POST", "/v1/search", keyA, `{"bad": 1}`},
		{"DELETE", "/v1/search", keyA, ""},
	} {
		var body any
		if tc.body != "" {
			body = tc.body
		}
		r := call(t, ts.Client(), ts.URL, tc.method, tc.path, tc.key, body)
		v, err := decodeAny(r.body)
		if err != nil {
			t.Fatal(err)
		}
		if errs := vd.validate(vd.resolve("#/components/schemas/Error"), v, "error"); len(errs) > 0 || r.status < 400 {
			t.Errorf("%s %s: %d %v", tc.method, tc.path, r.status, errs)
		}
	}
}

// TestValidatorCatches makes sure the schema checker rejects what it should.
func TestValidatorCatches(t *testing.T) {
	vd := &validator{doc: loadDoc(t)}
	query := vd.resolve("#/components/schemas/Query")
	tests := []struct {
		name, json string
		ok         bool
	}{
		{"valid", `{"query": "x", "limit": 3, "mode": "bm25"}`, true},
		{"missing required", `{"limit": 3}`, false},
		{"unknown property", `{"query": "x", "limt": 3}`, false},
		{"wrong type", `{"query": 3}`, false},
		{"not in enum", `{"query": "x", "mode": "magic"}`, false},
		{"below minimum", `{"query": "x", "limit": 0}`, false},
		{"fraction for integer", `{"query": "x", "limit": 1.5}`, false},
		{"bad date-time", `{"query": "x", "since": "yesterday"}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := decodeAny([]byte(tc.json))
			if err != nil {
				t.Fatal(err)
			}
			if errs := vd.validate(query, v, "q"); (len(errs) == 0) != tc.ok {
				t.Fatalf("errors %v, want ok=%v", errs, tc.ok)
			}
		})
	}
}

// TestOpenAPIServersAndMCP: the document names no fixed port (its server is
// the one that serves it), documents /mcp, and cites no section of a
// document the repository does not hold.
func TestOpenAPIServersAndMCP(t *testing.T) {
	doc := loadDoc(t)
	servers := doc["servers"].([]any)
	if url := servers[0].(map[string]any)["url"]; url != "/" {
		t.Errorf("servers url %v, want the relative /", url)
	}
	if _, ok := doc["paths"].(map[string]any)["/mcp"]; !ok {
		t.Error("/mcp is not documented")
	}
	if raw := string(OpenAPI()); strings.Contains(raw, "DESIGN") || strings.Contains(raw, "7077\"") {
		t.Error("the document cites DESIGN or a fixed port")
	}
}

// TestOpenAPIBoundsMatchServer: for the bounds the document states on the
// episode, supersession and time fields, the document's schema and the
// server give the same verdict on each body (valid and answered 2xx, or
// invalid and answered 400).
func TestOpenAPIBoundsMatchServer(t *testing.T) {
	doc := loadDoc(t)
	vd := &validator{doc: doc}
	_, ts := startServer(t, openDB(t, false), Config{})
	schemaOf := func(path string) map[string]any {
		op := doc["paths"].(map[string]any)[path].(map[string]any)["post"].(map[string]any)
		media := op["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)
		return media["schema"].(map[string]any)
	}
	// A memory to supersede, stored first.
	if r := call(t, ts.Client(), ts.URL, "POST", "/v1/memories", "", `{"id": "old", "text": "Sam lives in Porto"}`); r.status != 201 {
		t.Fatalf("setup: %d %s", r.status, r.body)
	}
	for _, tc := range []struct {
		path, body string
		ok         bool
	}{
		{"/v1/search", `{"query": "x", "neighbours": 20, "no_record": true}`, true},
		{"/v1/search", `{"query": "x", "neighbours": 21}`, false},
		{"/v1/search", `{"query": "x", "neighbours": -1}`, false},
		{"/v1/search", `{"query": "x", "as_of": "2026-01-01", "now": "7d", "include_superseded": true, "no_dates": true, "no_record": true}`, true},
		{"/v1/search", `{"query": "x", "as_of": "last tuesday"}`, false},
		{"/v1/search", `{"query": "x", "now": "yesterday"}`, false},
		{"/v1/inject", `{"prompt": "x", "neighbours": -1, "no_record": true}`, true},
		{"/v1/inject", `{"prompt": "x", "neighbours": 20, "no_record": true}`, true},
		{"/v1/inject", `{"prompt": "x", "neighbours": 21}`, false},
		{"/v1/brief", `{"neighbours": 20, "episode": "e", "as_of": "2026-01-01T00:00:00Z"}`, true},
		{"/v1/brief", `{"neighbours": 21}`, false},
		{"/v1/brief", `{"neighbours": -1}`, true},
		{"/v1/memories", `{"text": "x", "episode": "e", "seq": 9007199254740992, "speaker": "user", "occurred_at": "2026-01-01T00:00:00Z", "supersedes": "old"}`, true},
		{"/v1/memories", `{"text": "x", "episode": "e", "seq": -1}`, false},
		{"/v1/memories", `{"text": "x", "occurred_at": "2026-01-01"}`, false},
		{"/v1/episodes", `{"episode": "e2", "messages": [{"text": "a", "seq": 7, "speaker": "user", "occurred_at": "2026-01-01T00:00:00Z", "metadata": {"k": 1}}], "first_seq": 3, "type": "turn", "tags": ["t"], "source": "chat"}`, true},
		{"/v1/episodes", `{"episode": "e2", "messages": [{"text": "a"}], "first_seq": -1}`, false},
		{"/v1/episodes", `{"episode": "e2", "messages": [{"text": "a", "seq": -1}]}`, false},
		{"/v1/episodes", `{"episode": "e2", "messages": [{"text": "a", "who": "user"}]}`, false},
		{"/v1/episodes", `{"episode": "e2", "messages": [{"text": "a", "metadata": "x"}]}`, false},
		{"/v1/episodes", `{"messages": [{"text": "a"}]}`, false},
		{"/v1/episodes", `{"episode": "e2"}`, false},
	} {
		v, err := decodeAny([]byte(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		errs := vd.validate(schemaOf(tc.path), v, "body")
		if (len(errs) == 0) != tc.ok {
			t.Errorf("POST %s %s: schema errors %v, want valid=%v", tc.path, tc.body, errs, tc.ok)
		}
		r := call(t, ts.Client(), ts.URL, "POST", tc.path, "", tc.body)
		if served := r.status < 300; served != tc.ok || (!tc.ok && r.status != 400) {
			t.Errorf("POST %s %s: answered %d %s, want ok=%v", tc.path, tc.body, r.status, r.body, tc.ok)
		}
	}
}
