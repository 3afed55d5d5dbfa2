package sdk_test

// The shared test vectors over plain net/http against a real engram serve:
// the reference the Python and TypeScript runners must agree with.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// operation is one route of the OpenAPI document.
type operation struct{ method, path string }

// operations maps the served document's operationIds to their routes.
func operations(t *testing.T) map[string]operation {
	t.Helper()
	data, err := os.ReadFile("../server/httpapi/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	ops := map[string]operation{}
	for path, methods := range doc.Paths {
		for m, raw := range methods {
			var op struct {
				OperationID string `json:"operationId"`
			}
			if json.Unmarshal(raw, &op) != nil || op.OperationID == "" {
				continue // "parameters"
			}
			ops[op.OperationID] = operation{strings.ToUpper(m), path}
		}
	}
	return ops
}

// TestVectorsCoverEveryRoute: every operation of the served document has a
// case in the shared vectors, so each runner exercises every route.
func TestVectorsCoverEveryRoute(t *testing.T) {
	v := loadVectors(t)
	seen := map[string]bool{}
	for _, c := range v.Cases {
		seen[c.Op] = true
	}
	var missing []string
	for id := range operations(t) {
		if !seen[id] {
			missing = append(missing, id)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("operations without a test vector: %v", missing)
	}
	for _, c := range v.Cases {
		if _, ok := operations(t)[c.Op]; !ok && c.Op != "raw" {
			t.Errorf("case %q: op %q is not an operationId of the document", c.Name, c.Op)
		}
	}
}

func TestVectors(t *testing.T) {
	v := loadVectors(t)
	ops := operations(t)
	srv := startServer(t, v)
	for i, c := range v.Cases {
		// Cases run in order on one store: a failure is reported and the
		// next case still runs, so one break shows every case it affects.
		start := time.Now()
		err := runCase(srv.URL, v, ops, c)
		if d := time.Since(start); d > time.Second {
			t.Logf("case %d %q took %v", i, c.Name, d)
		}
		if err != nil {
			t.Errorf("case %d %q: %v", i, c.Name, err)
		}
	}
}

func runCase(base string, v *vectors, ops map[string]operation, c vectorCase) error {
	method, path := c.Method, c.Path
	if c.Op != "raw" {
		op := ops[c.Op]
		method, path = op.method, strings.ReplaceAll(op.path, "{id}", url.PathEscape(c.ID))
	}
	q := url.Values{}
	for k, val := range c.Query {
		switch x := val.(type) {
		case []any:
			for _, e := range x {
				q.Add(k, fmt.Sprint(e))
			}
		default:
			q.Set(k, fmt.Sprint(x))
		}
	}
	u := base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var body io.Reader
	ctype := ""
	switch {
	case c.RawBody != nil:
		body = strings.NewReader(*c.RawBody)
	case c.Op == "import":
		var lines []json.RawMessage
		if err := json.Unmarshal(c.Body, &lines); err != nil {
			return fmt.Errorf("import body: want an array of lines: %v", err)
		}
		var b bytes.Buffer
		for _, l := range lines {
			b.Write(l)
			b.WriteByte('\n')
		}
		body, ctype = &b, "application/x-ndjson"
	case len(c.Body) > 0:
		body, ctype = bytes.NewReader(c.Body), "application/json"
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		return err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if c.Op == "mcp" {
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	for k, val := range c.Headers {
		req.Header.Set(k, val)
	}
	if c.As != nil {
		k, ok := v.Keys[*c.As]
		if !ok {
			return fmt.Errorf("no key named %q", *c.As)
		}
		req.Header.Set("Authorization", "Bearer "+k.Key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("read the answer: %v", err)
	}
	if resp.StatusCode != c.Expect.Status {
		return fmt.Errorf("status %d, want %d: %s", resp.StatusCode, c.Expect.Status, data)
	}
	if resp.StatusCode >= 400 {
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if err := json.Unmarshal(data, &e); err != nil {
			return fmt.Errorf("error body is not the API's error JSON: %s", data)
		}
		if e.Error.Code != c.Expect.Code || e.Error.Message == "" {
			return fmt.Errorf("error %q (%s), want code %q", e.Error.Code, e.Error.Message, c.Expect.Code)
		}
		return nil
	}
	if c.Op == "export" {
		return checkExport(resp, data, c.Expect.IDs)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		return fmt.Errorf("answer is not a JSON object: %v", err)
	}
	if c.Expect.IDs != nil {
		if ids := resultIDs(c.Op, got); !slices.Equal(ids, c.Expect.IDs) {
			return fmt.Errorf("ids %v, want %v", ids, c.Expect.IDs)
		}
	}
	if c.Expect.HasNext != nil {
		if _, has := got["next_cursor"]; has != *c.Expect.HasNext {
			return fmt.Errorf("next_cursor present %v, want %v", has, *c.Expect.HasNext)
		}
	}
	if c.Expect.SkippedLines != nil {
		var lines []int
		skipped, _ := got["skipped"].([]any)
		for _, s := range skipped {
			lines = append(lines, int(s.(map[string]any)["line"].(float64)))
		}
		if !slices.Equal(lines, c.Expect.SkippedLines) {
			return fmt.Errorf("skipped lines %v, want %v", lines, c.Expect.SkippedLines)
		}
	}
	if c.Expect.ToolsInclude != nil {
		var names []string
		res, _ := got["result"].(map[string]any)
		tools, _ := res["tools"].([]any)
		for _, tl := range tools {
			names = append(names, tl.(map[string]any)["name"].(string))
		}
		for _, n := range c.Expect.ToolsInclude {
			if !slices.Contains(names, n) {
				return fmt.Errorf("tools %v lack %q", names, n)
			}
		}
	}
	if err := subset("", c.Expect.JSON, got); err != nil {
		return err
	}
	return nil
}

// resultIDs are the ids an answer lists, in order, by operation.
func resultIDs(op string, got map[string]any) []string {
	var list []any
	field := "id"
	switch op {
	case "listMemories":
		list, _ = got["memories"].([]any)
	case "search", "inject":
		list, _ = got["results"].([]any)
	case "brief":
		list, _ = got["items"].([]any)
	case "memoryHistory":
		list, _ = got["versions"].([]any)
	case "addMemories", "addEpisode", "import":
		ids, _ := got["ids"].([]any)
		out := []string{}
		for _, id := range ids {
			out = append(out, id.(string))
		}
		return out
	default:
		id, _ := got["id"].(string)
		return []string{id}
	}
	out := []string{}
	for _, e := range list {
		out = append(out, e.(map[string]any)[field].(string))
	}
	return out
}

// checkExport reads the JSONL body's ids and checks the count trailer.
func checkExport(resp *http.Response, data []byte, want []string) error {
	ids := []string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var m struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return fmt.Errorf("export line %d: %v", len(ids)+1, err)
		}
		ids = append(ids, m.ID)
	}
	if n, err := strconv.Atoi(resp.Trailer.Get("Engram-Export-Count")); err != nil || n != len(ids) {
		return fmt.Errorf("trailer Engram-Export-Count %q, read %d lines", resp.Trailer.Get("Engram-Export-Count"), len(ids))
	}
	if want != nil && !slices.Equal(ids, want) {
		return fmt.Errorf("exported ids %v, want %v", ids, want)
	}
	return nil
}

// subset checks that every field of want holds in got: objects field by
// field (recursively), a list of objects as as many objects each matched
// field by field, everything else equal as JSON. The Python and TypeScript
// runners match the same way.
func subset(at string, want map[string]any, got map[string]any) error {
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			return fmt.Errorf("field %s%s missing", at, k)
		}
		if err := match(at+k, w, g); err != nil {
			return err
		}
	}
	return nil
}

// match is subset for one value at path at.
func match(at string, w, g any) error {
	if wm, ok := w.(map[string]any); ok {
		gm, ok := g.(map[string]any)
		if !ok {
			return fmt.Errorf("field %s is %v, want an object", at, g)
		}
		return subset(at+".", wm, gm)
	}
	if wl, ok := w.([]any); ok && len(wl) > 0 {
		if _, objects := wl[0].(map[string]any); objects {
			gl, ok := g.([]any)
			if !ok || len(gl) != len(wl) {
				return fmt.Errorf("field %s is %v, want %d objects like %v", at, g, len(wl), w)
			}
			for i := range wl {
				if err := match(fmt.Sprintf("%s[%d]", at, i), wl[i], gl[i]); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if !reflect.DeepEqual(w, g) {
		return fmt.Errorf("field %s is %v, want %v", at, g, w)
	}
	return nil
}
