package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/engram-memory/engram/memory"
)

// writeV1 makes a schema-1 file as the last build before ids became per-scope
// namespaces wrote it: memories keyed by id, a change log without scopes.
func writeV1(t *testing.T, path string, rows ...*memory.Memory) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmts := schemaV1 + fmt.Sprintf("\nPRAGMA application_id = %d;\nPRAGMA user_version = 1;", applicationID)
	if _, err := db.Exec(stmts); err != nil {
		t.Fatal(err)
	}
	for _, m := range rows {
		args, err := rowArgs(m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO memories (`+memoryColumnsV2+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, args[:20]...); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO changes (id, op) VALUES (?, 'put')`, m.ID); err != nil {
			t.Fatal(err)
		}
	}
	// A scope written by hand, not in canonical form.
	if _, err := db.Exec(`UPDATE memories SET scope = '{ "user":"u1", "team":"t1" }' WHERE id = 'hand'`); err != nil {
		t.Fatal(err)
	}
}

// TestMigrateV1InPlace: a schema-1 file is upgraded in place on open: every
// row kept as it was (a hand-written scope made canonical), the old change
// log kept (its entries name no scope), and the file then holds the same id
// in two scopes.
func TestMigrateV1InPlace(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	a, hand := testMemory("a"), testMemory("hand")
	writeV1(t, path, a, hand)
	// Schema 1 and 2 hold no episode fields: a migrated memory is in no
	// episode and occurred when it was created.
	for _, m := range []*memory.Memory{a, hand} {
		m.Episode, m.Seq, m.Speaker, m.Supersedes, m.OccurredAt = "", 0, "", "", m.CreatedAt
	}
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v int
	if err := s.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion {
		t.Fatalf("schema after open: %d, %v; want %d", v, err, SchemaVersion)
	}
	if got := get1(t, s, nil, "a"); !reflect.DeepEqual(got, a) {
		t.Fatalf("a after the migration:\n%+v\nwant\n%+v", got, a)
	}
	want := *hand
	want.Scope = t1u1
	if got := get1(t, s, t1u1, "hand"); !reflect.DeepEqual(got, &want) {
		t.Fatalf("the hand-written scope after the migration:\n%+v\nwant\n%+v", got, &want)
	}
	ch, err := s.Changes(ctx, 0, 10)
	if err != nil || len(ch) != 2 || ch[0].Scope != "" || ch[0].Key() != "" {
		t.Fatalf("old change log: %+v, %v", ch, err)
	}
	other := testMemory("a")
	other.Scope = t2
	if _, _, err := s.Put(ctx, nil, []*memory.Memory{other}); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Count(ctx); n != 3 {
		t.Fatalf("after writing a in another scope: %d memories, want 3", n)
	}
	// Opening again does nothing more.
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()
}

// TestMigrateV2ToV3: a schema-2 file (before episodes) opens with every row
// as it was, each memory in no episode and occurred when it was created; the
// change log keeps its scopes, and the upgraded file takes the new fields.
func TestMigrateV2ToV3(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v2.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	stmts := schemaV1 + fmt.Sprintf("\nPRAGMA application_id = %d;\nPRAGMA user_version = 1;", applicationID)
	if _, err := db.Exec(stmts); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(schemaV2 + "\nPRAGMA user_version = 2;"); err != nil {
		t.Fatal(err)
	}
	a := testMemory("a")
	args, err := rowArgs(a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO memories (`+memoryColumnsV2+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, args[:20]...); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO changes (id, scope, op) VALUES ('a', ?, 'put')`, args[6]); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a.Episode, a.Seq, a.Speaker, a.Supersedes, a.OccurredAt = "", 0, "", "", a.CreatedAt
	if got := get1(t, s, a.Scope, "a"); !reflect.DeepEqual(got, a) {
		t.Fatalf("a after the migration:\n%+v\nwant\n%+v", got, a)
	}
	if ch, err := s.Changes(ctx, 0, 10); err != nil || len(ch) != 1 || ch[0].Key() != a.Key() {
		t.Fatalf("change log after the migration: %+v, %v", ch, err)
	}
	turn := testMemory("b")
	if _, _, err := s.Put(ctx, nil, []*memory.Memory{turn}); err != nil {
		t.Fatal(err)
	}
	if got := get1(t, s, turn.Scope, "b"); !reflect.DeepEqual(got, turn) {
		t.Fatalf("a turn written after the migration:\n%+v\nwant\n%+v", got, turn)
	}
	rep, err := Doctor(ctx, path, false)
	if err != nil || rep.Detected != SchemaVersion || !rep.OK() {
		t.Fatalf("doctor after the migration: %+v, %v", rep, err)
	}
}

// TestOpenBadHeaders: a damaged schema version is a clear error, never a
// panic or a confusing migration failure.
func TestOpenBadHeaders(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		version int
		want    error
		says    string
	}{
		{"negative", -1, ErrDamaged, "negative"},
		{"zero on a file with tables", 0, ErrDamaged, "is 0 but the file holds"},
		{"newer", SchemaVersion + 1, ErrNewerSchema, "this build knows up to"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, path := openTemp(t)
			if _, err := s.db.Exec(fmt.Sprintf("PRAGMA user_version = %d", c.version)); err != nil {
				t.Fatal(err)
			}
			s.Close()
			s, err := Open(ctx, path)
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("Open = %v; want %v saying %q", err, c.want, c.says)
			}
		})
	}
}

// TestStaleSnapshotTemps is in internal/mirror; TestReadOnly needs a user
// that permissions apply to, see readonly_test.go.

func TestMain(m *testing.M) {
	if os.Getenv(readOnlyChildEnv) != "" {
		os.Exit(readOnlyChild())
	}
	os.Exit(m.Run())
}

// TestMigrateFillsTextKeys: a file of an older schema gets every memory's
// text key on open, so a repeat of a memory stored before is found.
func TestMigrateFillsTextKeys(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	old := testMemory("old")
	old.Text = "The  standup moved\nto 9:45"
	writeV1(t, path, old)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var key string
	if err := s.db.QueryRow(`SELECT text_key FROM memories WHERE id = 'old'`).Scan(&key); err != nil || key != memory.TextKey(old.Text) {
		t.Fatalf("text key after the migration: %q, %v; want %q", key, err, memory.TextKey(old.Text))
	}
	repeat := testMemory("new")
	repeat.Text, repeat.Scope = "The standup moved to 9:45", old.Scope
	existing, written, _, _, err := s.PutMerging(ctx, nil, []*memory.Memory{repeat}, []bool{true}, nil)
	if err != nil || len(existing) != 1 || existing[0] != "old" || len(written) != 0 {
		t.Fatalf("a repeat of a migrated memory: existing %q, written %d, %v", existing, len(written), err)
	}
}
