package mirror

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"testing"
	"time"
)

// TestStaleSnapshotTempsRemoved: the temp file of a snapshot write that was
// killed (PATH.idx.tmpNNNN, about the size of the store) is removed by the
// next open once it is older than a live writer could leave it; a fresh one,
// possibly another process's write in progress, is kept.
func TestStaleSnapshotTempsRemoved(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t, 3)
	base := SnapshotPath(st.Path())
	stale, fresh := base+".tmp123456", base+".tmp999999"
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, make([]byte, 4096), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleTempAge)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, st, testOptions()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the stale temp file is still there: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Fatalf("a fresh temp file was removed: %v", err)
	}
}

// TestBadRowsSurviveSnapshot: the rows a rebuild could not read are reported
// by a later open from the snapshot too, which reads no rows.
func TestBadRowsSurviveSnapshot(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t, 5)
	raw, err := sql.Open("sqlite", st.Path())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`UPDATE memories SET scope = '{"team":' WHERE id = 'm02'`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	opts := testOptions()
	opts.NoSnapshot, opts.SnapshotMinMemories = false, 1
	first, err := Open(ctx, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	if bad := first.BadRows(); len(bad) != 1 || bad[0].ID != "m02" || !bad[0].Skipped {
		t.Fatalf("rebuild: bad rows %+v", bad)
	}
	if first.snapSeq < 0 {
		t.Fatal("no snapshot was written")
	}
	again, err := Open(ctx, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	if again.snapSeq < 0 {
		t.Fatal("the second open did not load the snapshot")
	}
	if bad := again.BadRows(); len(bad) != 1 || bad[0].ID != "m02" {
		t.Fatalf("from the snapshot: bad rows %+v", bad)
	}
}
