package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// sameIDs is a store where the id "same" names three memories: two users'
// of team a and team b's.
const sameIDs = `{"id":"same","text":"u1's note","scope":{"team":"a","user":"u1"}}
{"id":"same","text":"u2's note","scope":{"team":"a","user":"u2"}}
{"id":"same","text":"team b's note","scope":{"team":"b"}}
`

// TestCLIWithin: an id that names memories in several scopes is ambiguous
// (exit 2, one line); every command on one memory takes --within to name one,
// on a local file and through a server with a tenant's key.
func TestCLIWithin(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "none")
	t.Setenv("ENGRAM_URL", "")
	db := filepath.Join(t.TempDir(), "w.db")
	mustCLI(t, db, sameIDs, "import", "-")
	if _, errs, code := cli(t, db, "", "get", "same"); code != 2 || !strings.Contains(errs, "ambiguous") || strings.Count(errs, "\n") != 1 {
		t.Fatalf("get of an ambiguous id: exit %d: %q", code, errs)
	}
	if out := mustCLI(t, db, "", "get", "same", "--within", "team=a,user=u2"); !strings.Contains(out, "u2's note") {
		t.Fatalf("get --within: %s", out)
	}
	mustCLI(t, db, "", "update", "same", "--within", "user=u2", "--within", "team=a", "--text", "u2's new note")
	mustCLI(t, db, "", "favorite", "same", "--within", "team=b")
	mustCLI(t, db, "", "touch", "same", "--within", "team=b")
	if out := mustCLI(t, db, "", "history", "same", "--within", "user=u2"); !strings.Contains(out, "u2's new note") {
		t.Fatalf("history --within: %s", out)
	}
	if out := mustCLI(t, db, "", "get", "same", "--within", "team=b"); !strings.Contains(out, `"favorite": true`) || !strings.Contains(out, `"uses": 1`) {
		t.Fatalf("favorite and touch --within team=b: %s", out)
	}
	if _, errs, code := cli(t, db, "", "get", "same", "--within", "user"); code != 2 || !strings.Contains(errs, "--within") {
		t.Fatalf("bad --within: exit %d: %q", code, errs)
	}
	if _, errs, code := cli(t, db, "", "delete", "--scope", "team=a", "--within", "user=u1"); code != 2 {
		t.Fatalf("delete --scope with --within: exit %d: %q", code, errs)
	}
	mustCLI(t, db, "", "delete", "same", "--within", "user=u1")

	// Through a server, with team a's key: the same, never reaching team b.
	const keyA = "within-key-a-0123456789"
	t.Setenv("ENGRAM_API_KEYS", `{"keys": [{"key": "`+keyA+`", "scope": {"team": "a"}}]}`)
	srv := startServe(t, db)
	mustCLI(t, db, `{"id":"same","text":"u1's second note","scope":{"team":"a","user":"u1"}}`+"\n", "import", "-")
	if _, errs, code := clientCLI(t, srv.url, keyA, "", "get", "same"); code != 2 || !strings.Contains(errs, "ambiguous") {
		t.Fatalf("client get of an ambiguous id: exit %d: %q", code, errs)
	}
	if out := mustClient(t, srv.url, keyA, "", "get", "same", "--within", "user=u1"); !strings.Contains(out, "u1's second note") {
		t.Fatalf("client get --within: %s", out)
	}
	if _, errs, code := clientCLI(t, srv.url, keyA, "", "get", "same", "--within", "team=b"); code != 2 || strings.Contains(errs, "team b's note") {
		t.Fatalf("client get --within another tenant's scope: exit %d: %q", code, errs)
	}
	if out := mustClient(t, srv.url, keyA, "", "delete", "same", "--within", "user=u2"); !strings.Contains(out, "deleted 1") {
		t.Fatalf("client delete --within: %s", out)
	}
	if out := mustCLI(t, db, "", "get", "same", "--within", "team=b"); !strings.Contains(out, "team b's note") {
		t.Fatalf("team b's memory after team a's deletes: %s", out)
	}
}

// TestCLIScopeWhitespace: a scope key or value with surrounding whitespace is
// refused by every command (exit 2, one line naming it), never trimmed; a
// memory stored before the rule still reads, lists, moves and deletes, and
// doctor names it.
func TestCLIScopeWhitespace(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "none")
	t.Setenv("ENGRAM_URL", "")
	db := filepath.Join(t.TempDir(), "s.db")
	mustCLI(t, db, `{"id":"a1","text":"team a's note","scope":{"team":"a"}}`+"\n"+
		`{"id":"old","text":"a note from before the rule","scope":{"team":"x"}}`+"\n", "import", "-")
	for _, c := range []struct {
		stdin string
		args  []string
	}{
		{"", []string{"add", "x", "--scope", "team=a "}},
		{"", []string{"list", "--scope", "team= a"}},
		{"", []string{"delete", "--scope", "team=a "}},
		{"", []string{"search", "note", "--scope", "team=a\t"}},
		{"", []string{"get", "a1", "--within", "team=a "}},
		{`{"text":"x","scope":{"team":"a "}}` + "\n", []string{"import", "-"}},
	} {
		if _, errs, code := cli(t, db, c.stdin, c.args...); code != 2 || !strings.Contains(errs, "team=") || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d: %q, want exit 2 and one line naming the scope", c.args, code, errs)
		}
	}
	if out := mustCLI(t, db, "", "list", "--scope", "team=a", "--json"); !strings.Contains(out, `"a1"`) {
		t.Fatalf("team a's memory after the refused writes: %s", out)
	}
	damageFile(t, db, `UPDATE memories SET scope = '{"team":"a "}' WHERE id = 'old'`)
	if out := mustCLI(t, db, "", "get", "old"); !strings.Contains(out, `"team": "a "`) {
		t.Fatalf("the old memory does not read: %s", out)
	}
	if out := mustCLI(t, db, "", "list", "--json"); !strings.Contains(out, `"old"`) || strings.Contains(mustCLI(t, db, "", "stats"), "bad row") {
		t.Fatalf("the old memory is not listed, or is a bad row: %s", out)
	}
	out, _, code := cli(t, db, "", "doctor")
	if code != 2 || !strings.Contains(out, `memory "old"`) || !strings.Contains(out, "engram update old --scope") {
		t.Fatalf("doctor on the old scope: exit %d\n%s", code, out)
	}
	mustCLI(t, db, "", "update", "old", "--scope", "team=a2")
	if out := mustCLI(t, db, "", "get", "old", "--within", "team=a2"); !strings.Contains(out, "before the rule") {
		t.Fatalf("moved: %s", out)
	}
	damageFile(t, db, `UPDATE memories SET scope = '{"team":"a "}' WHERE id = 'old'`)
	mustCLI(t, db, "", "delete", "old")
	if out := mustCLI(t, db, "", "list", "--json"); strings.Contains(out, `"old"`) || !strings.Contains(out, `"a1"`) {
		t.Fatalf("after deleting the old memory: %s", out)
	}
}
