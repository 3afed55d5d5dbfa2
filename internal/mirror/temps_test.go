package mirror

import (
	"context"
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
