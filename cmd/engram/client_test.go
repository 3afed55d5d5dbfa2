package main

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// client runs one command line as a client of the server at url (no --db).
func clientCLI(t *testing.T, url, key, stdin string, args ...string) (string, string, int) {
	t.Helper()
	t.Setenv("ENGRAM_URL", url)
	t.Setenv("ENGRAM_API_KEY", key)
	var out, errb strings.Builder
	code := run(t.Context(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

func mustClient(t *testing.T, url, key, stdin string, args ...string) string {
	t.Helper()
	out, errs, code := clientCLI(t, url, key, stdin, args...)
	if code != 0 {
		t.Fatalf("engram %v via %s: exit %d: %s", args, url, code, errs)
	}
	return out
}

// TestCLIClient runs the real CLI against a real "engram serve": add, search,
// get, update, favorite, touch, stats, export, import, delete, with the same
// output and exit codes as the local path.
func TestCLIClient(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "")
	t.Setenv("ENGRAM_API_KEYS", "")
	dbPath := filepath.Join(t.TempDir(), "served.db")
	srv := startServe(t, dbPath)
	u := srv.url

	id := strings.TrimSpace(mustClient(t, u, "", "", "add", "tasks_claim must run inside a transaction",
		"--name", "claim", "--type", "fact", "--scope", "team=t1", "--tag", "db"))
	if id == "" || strings.Contains(id, "\n") {
		t.Fatalf("add printed %q", id)
	}
	mustClient(t, u, "", "", "add", "The user prefers dark themes", "--scope", "team=t1,user=u7", "--favorite")

	var resp struct {
		Strategy string
		Results  []struct{ ID string }
	}
	out := mustClient(t, u, "", "", "search", "tasks_claim", "--json", "--scope", "team=t1", "--no-record")
	if err := json.Unmarshal([]byte(out), &resp); err != nil || len(resp.Results) == 0 || resp.Results[0].ID != id {
		t.Fatalf("search: %s (%v)", out, err)
	}
	if out := mustClient(t, u, "", "", "search", "dark themes", "--no-record"); !strings.Contains(out, "dark themes") {
		t.Fatalf("explained search: %q", out)
	}
	batch := `{"qid": "a", "query": "transaction"}` + "\n" + `{"qid": "b", "query": ""}` + "\n"
	out, _, code := clientCLI(t, u, "", batch, "search", "--batch", "-", "--json", "--no-record")
	if code != 2 || strings.Count(out, "\n") != 2 || !strings.Contains(out, `"qid":"a"`) || !strings.Contains(out, "query text is empty") {
		t.Fatalf("batch search: exit %d: %s", code, out)
	}

	// get, update, favorite and touch print what the local path prints.
	remote := mustClient(t, u, "", "", "get", id)
	local := mustCLI(t, dbPath, "", "get", id)
	if remote != local {
		t.Fatalf("get differs:\nclient: %s\nlocal:  %s", remote, local)
	}
	if out := mustClient(t, u, "", "", "update", id, "--text", "tasks_claim needs a transaction"); strings.TrimSpace(out) != id {
		t.Fatalf("update printed %q", out)
	}
	if out := mustClient(t, u, "", "", "favorite", id); out != id+" favorite=true\n" {
		t.Fatalf("favorite printed %q", out)
	}
	if out := mustClient(t, u, "", "", "touch", id); out != "touched "+id+"\n" {
		t.Fatalf("touch printed %q", out)
	}
	if out := mustClient(t, u, "", "", "get", id); !strings.Contains(out, "needs a transaction") || !strings.Contains(out, `"favorite": true`) || !strings.Contains(out, `"uses": 1`) {
		t.Fatalf("get after update: %s", out)
	}
	if out := mustClient(t, u, "", "", "stats"); !strings.Contains(out, "2 memories (2 favorites)") {
		t.Fatalf("stats: %q", out)
	}

	// export through the server is byte for byte the local export; importing
	// it into a fresh served store restores it.
	exp := mustClient(t, u, "", "", "export")
	if local := mustCLI(t, dbPath, "", "export"); exp != local {
		t.Fatalf("export differs:\nclient: %s\nlocal:  %s", exp, local)
	}
	other := filepath.Join(t.TempDir(), "other.db")
	srv2 := startServe(t, other)
	if out := mustClient(t, srv2.url, "", exp, "import", "-"); !strings.HasPrefix(out, "imported 2 memories") {
		t.Fatalf("import: %q", out)
	}
	if again := mustClient(t, srv2.url, "", "", "export"); again != exp {
		t.Fatalf("import of the export did not restore it:\n%s\nwant\n%s", again, exp)
	}
	_, errs, code := clientCLI(t, srv2.url, "", `{"text": "ok"}`+"\n"+`{"text": 5}`+"\n", "import", "-")
	if code != 2 || !strings.Contains(errs, "line 2") {
		t.Fatalf("invalid import: exit %d: %s", code, errs)
	}

	// list pages as the local path does; reindex and calibrate refuse to act
	// on a local file while ENGRAM_URL names the server.
	if remote, local := mustClient(t, u, "", "", "--json", "list", "--scope", "team=t1", "--order", "id"),
		mustCLI(t, dbPath, "", "--json", "list", "--scope", "team=t1", "--order", "id"); remote != local || !strings.Contains(remote, id) {
		t.Fatalf("list differs:\nclient: %s\nlocal:  %s", remote, local)
	}
	out, errs, code = clientCLI(t, u, "", "", "list", "--limit", "1")
	if code != 0 || strings.Count(out, "\n") != 1 || !strings.Contains(errs, "engram list --limit 1 --cursor ") {
		t.Fatalf("list --limit 1: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	for _, cmd := range []string{"reindex", "calibrate"} {
		if _, errs, code := clientCLI(t, u, "", "", cmd); code != 2 || !strings.Contains(errs, cmd+" works on a store file, and ENGRAM_URL") {
			t.Errorf("%s with ENGRAM_URL: exit %d: %s", cmd, code, errs)
		}
	}

	// delete, then errors map back to the local exit codes and messages.
	if out := mustClient(t, u, "", "", "delete", id); out != "deleted 1\n" {
		t.Fatalf("delete printed %q", out)
	}
	_, remoteErr, code := clientCLI(t, u, "", "", "get", id)
	_, localErr, localCode := cli(t, dbPath, "", "get", id)
	if code != 2 || localCode != 2 || remoteErr != localErr {
		t.Fatalf("get of a deleted id: client exit %d %q, local exit %d %q", code, remoteErr, localCode, localErr)
	}
	if _, errs, code := clientCLI(t, u, "", "", "search", "x", "--limit", "5000"); code != 2 || !strings.Contains(errs, "limit") {
		t.Fatalf("huge limit: exit %d: %s", code, errs)
	}
	// Delete by scope: the rest of team t1 in one call.
	if out := mustClient(t, u, "", "", "delete", "--scope", "team=t1"); out != "deleted 1\n" {
		t.Fatalf("delete --scope printed %q", out)
	}
	if out := mustClient(t, u, "", "", "stats"); !strings.Contains(out, "0 memories") {
		t.Fatalf("stats after delete --scope: %q", out)
	}

	if code := srv.stop(); code != 0 {
		t.Fatalf("serve exited %d: %s", code, srv.stderr())
	}
	if !strings.Contains(srv.stderr(), "engram: stopped") {
		t.Fatalf("serve stderr: %s", srv.stderr())
	}
}

// TestCLIClientKeys: keys from ENGRAM_API_KEYS confine each client to its scope.
func TestCLIClientKeys(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "none")
	const a, b = "client-key-a-0123456789", "client-key-b-0123456789"
	t.Setenv("ENGRAM_API_KEYS", `{"keys": [{"key": "`+a+`", "scope": {"team": "a"}}, {"key": "`+b+`", "scope": {"team": "b"}}]}`)
	srv := startServe(t, filepath.Join(t.TempDir(), "keyed.db"))
	id := strings.TrimSpace(mustClient(t, srv.url, a, "", "add", "team A's launch plan"))
	if out := mustClient(t, srv.url, a, "", "get", id); !strings.Contains(out, `"team": "a"`) {
		t.Fatalf("A's memory lacks A's scope: %s", out)
	}
	for _, args := range [][]string{{"get", id}, {"delete", id}, {"favorite", id}, {"touch", id}, {"update", id, "--text", "x"}} {
		if _, errs, code := clientCLI(t, srv.url, b, "", args...); code != 2 || !strings.Contains(errs, "not found") {
			t.Errorf("B %v: exit %d: %s", args, code, errs)
		}
	}
	if out := mustClient(t, srv.url, b, "", "export"); out != "" {
		t.Errorf("B's export: %q", out)
	}
	if _, errs, code := clientCLI(t, srv.url, a, "", "add", "x", "--scope", "team=b"); code != 2 || !strings.Contains(errs, "outside this API key's scope") {
		t.Errorf("A writing into B's scope: exit %d: %s", code, errs)
	}
	for _, key := range []string{"", "wrong-key-0123456789"} {
		if _, errs, code := clientCLI(t, srv.url, key, "", "stats"); code != 2 || !strings.Contains(errs, "API key") {
			t.Errorf("key %q: exit %d: %s", key, code, errs)
		}
	}
}

// TestCLIClientErrors: a server error exits 1 with the server's message, a
// transport failure exits 1, a bad ENGRAM_URL exits 2.
func TestCLIClientErrors(t *testing.T) {
	// The one answer a real server cannot be made to give on demand: a 500.
	fail := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`{"error": {"code": "internal", "message": "internal error (details are in the server log)"}}`))
	}))
	defer fail.Close()
	if _, errs, code := clientCLI(t, fail.URL, "", "", "get", "x"); code != 1 || errs != "engram: internal error (details are in the server log)\n" {
		t.Errorf("500: exit %d: %q", code, errs)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	if _, errs, code := clientCLI(t, closed, "", "", "stats"); code != 1 || !strings.Contains(errs, "connection refused") {
		t.Errorf("closed port: exit %d: %q", code, errs)
	}
	if _, errs, code := clientCLI(t, "ftp://x", "", "", "stats"); code != 2 || !strings.Contains(errs, "ENGRAM_URL") {
		t.Errorf("bad URL: exit %d: %q", code, errs)
	}
}
