package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// damageFile applies hand edits to a store file, as a corrupting tool would.
func damageFile(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestMalformedRowsSalvaged: rows damaged by hand (a scope that is no JSON, a
// 2-byte vector blob, a REAL counter) no longer make the store unopenable:
// search and export work on the rest, stats lists the bad rows, doctor
// explains each, and doctor --repair fixes what it can without losing
// anything, leaving the row it cannot read reported.
func TestMalformedRowsSalvaged(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "")
	db := filepath.Join(t.TempDir(), "bad.db")
	var lines string
	for _, id := range []string{"good", "scope", "blob", "uses", "meta"} {
		lines += `{"id":"` + id + `","text":"the ` + id + ` memory mentions kittens","embedding":{"model":"m","vector":[0.6,0.8]}}` + "\n"
	}
	mustCLI(t, db, lines, "import", "-")
	damageFile(t, db,
		`UPDATE memories SET scope = '{"team":' WHERE id = 'scope'`,
		`UPDATE memories SET embedding = x'0102' WHERE id = 'blob'`,
		`UPDATE memories SET uses = 9.3e18 WHERE id = 'uses'`,
		`UPDATE memories SET metadata = 'not json at all' WHERE id = 'meta'`,
	)
	out := mustCLI(t, db, "", "export")
	if n := strings.Count(out, "\n"); n != 4 || strings.Contains(out, `"id":"scope"`) {
		t.Fatalf("export salvaged %d lines:\n%s", n, out)
	}
	if out := mustCLI(t, db, "", "search", "kittens", "--json", "--no-record"); strings.Count(out, `"id":`) != 4 {
		t.Fatalf("search over the salvaged rows: %s", out)
	}
	var st struct {
		BadRows []struct {
			ID      string
			Skipped bool
		} `json:"bad_rows"`
	}
	if err := json.Unmarshal([]byte(mustCLI(t, db, "", "stats", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(st.BadRows); got != "[{blob false} {meta false} {scope true} {uses false}]" {
		t.Fatalf("stats' bad rows: %s", got)
	}
	if out := mustCLI(t, db, "", "stats"); !strings.Contains(out, "4 bad rows (1 skipped)") {
		t.Fatalf("stats: %s", out)
	}
	out, errs, code := cli(t, db, "", "doctor")
	if code != 2 || !strings.Contains(errs, "problem(s) left") {
		t.Fatalf("doctor: exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{`memory "scope"`, "not repairable", `memory "blob"`, "embedding", `memory "uses"`, "out of range", `memory "meta"`, "metadata"} {
		if !strings.Contains(out, want) {
			t.Fatalf("doctor's report lacks %q:\n%s", want, out)
		}
	}
	out, errs, code = cli(t, db, "", "doctor", "--repair")
	if code != 2 || strings.Count(out, "fixed:") != 3 || strings.Count(out, "to fix:") != 1 {
		t.Fatalf("doctor --repair: exit %d\n%s\n%s", code, out, errs)
	}
	got := mustCLI(t, db, "", "get", "meta", "--json")
	if !strings.Contains(strings.Join(strings.Fields(got), ""), `"engram_doctor":{"metadata":"notjsonatall"}`) {
		t.Fatalf("the unreadable metadata was not kept: %s", got)
	}
	if out, _, _ := cli(t, db, "", "doctor"); strings.Count(out, "- ") != 1 {
		t.Fatalf("after the repair doctor finds:\n%s", out)
	}
}

// TestDoctorSchemaVersion: a file whose schema version was reset or made
// negative fails to open with a message that names doctor, and doctor
// --repair restores it from the tables.
func TestDoctorSchemaVersion(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "")
	for _, v := range []int{0, -1} {
		db := filepath.Join(t.TempDir(), "v.db")
		mustCLI(t, db, "", "add", "a memory")
		if err := setUserVersion(db, v); err != nil {
			t.Fatal(err)
		}
		if _, errs, code := cli(t, db, "", "stats"); code != 2 || !strings.Contains(errs, "engram doctor") {
			t.Fatalf("user_version %d: exit %d, %q", v, code, errs)
		}
		if out := mustCLI(t, db, "", "doctor", "--repair"); !strings.Contains(out, "fixed: repair sets it to 4") {
			t.Fatalf("doctor --repair: %s", out)
		}
		if out := mustCLI(t, db, "", "stats"); !strings.Contains(out, "1 memories") {
			t.Fatalf("after the repair: %s", out)
		}
	}
}

// TestDoctorRepairSeenByServer: a running server's stats stop listing the
// rows another process's doctor --repair fixed (the repair logs each row it
// rewrites under the key the server knows it by), while the row doctor
// cannot repair stays listed.
func TestDoctorRepairSeenByServer(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "none")
	t.Setenv("ENGRAM_API_KEYS", "")
	db := filepath.Join(t.TempDir(), "live.db")
	var lines string
	for _, id := range []string{"good", "scope", "canon", "uses", "meta"} {
		lines += `{"id":"` + id + `","text":"the ` + id + ` memory mentions kittens","scope":{"team":"t1","user":"u1"}}` + "\n"
	}
	mustCLI(t, db, lines, "import", "-")
	damageFile(t, db,
		`UPDATE memories SET scope = '{"team":' WHERE id = 'scope'`,
		`UPDATE memories SET scope = '{"user":"u1","team":"t1"}' WHERE id = 'canon'`,
		`UPDATE memories SET uses = 9.3e18 WHERE id = 'uses'`,
		`UPDATE memories SET metadata = 'not json at all' WHERE id = 'meta'`,
	)
	srv := startServe(t, db)
	badRows := func() string {
		t.Helper()
		var st struct {
			BadRows []struct{ ID string } `json:"bad_rows"`
		}
		if err := json.Unmarshal([]byte(mustClient(t, srv.url, "", "", "stats", "--json")), &st); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(st.BadRows)
	}
	if got := badRows(); got != "[{canon} {meta} {scope} {uses}]" {
		t.Fatalf("the server's bad rows before the repair: %s", got)
	}
	if out, errs, code := cli(t, db, "", "doctor", "--repair"); code != 2 || strings.Count(out, "fixed:") != 3 {
		t.Fatalf("doctor --repair: exit %d\n%s\n%s", code, out, errs)
	}
	if got := badRows(); got != "[{scope}]" {
		t.Fatalf("the server's bad rows after another process's repair: %s, want the unrepairable one only", got)
	}
	if out := mustClient(t, srv.url, "", "", "search", "kittens", "--json", "--no-record"); strings.Count(out, `"id":`) != 4 {
		t.Fatalf("the server's search after the repair: %s", out)
	}
}
