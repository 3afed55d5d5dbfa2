package httpapi

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/engram-memory/engram/backend"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/backend/sqlite"
	"github.com/engram-memory/engram/memory"
)

// driverFull is the error the SQLite driver returns for a write the file
// cannot hold (SQLITE_FULL), made for real: a table on a file limited to a
// few pages, filled.
func driverFull(t *testing.T) error {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "tiny.db")+"?_pragma=max_page_count(3)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE t (v TEXT)"); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if _, err := db.Exec("INSERT INTO t VALUES (?)", strings.Repeat("x", 2000)); err != nil {
			return err
		}
	}
	t.Fatal("a 3-page file took 100 rows of 2 KB")
	return nil
}

// fullDisk is the SQLite backend on a disk that fills at the next write:
// writes fail as the store's would (ErrFull around the driver's or the
// system's error), reads work.
type fullDisk struct {
	*sqlite.Backend
	err error
}

func (f fullDisk) Put(context.Context, map[string]string, []*memory.Memory) error {
	return fmt.Errorf("store memories: %w", f.err)
}

func (f fullDisk) PutMerging(context.Context, map[string]string, []*memory.Memory, []bool, backend.MergeFunc) ([]string, error) {
	return nil, fmt.Errorf("store memories: %w", f.err)
}

func (f fullDisk) Delete(context.Context, map[string]string, []string) (int, error) {
	return 0, fmt.Errorf("delete: %w", f.err)
}

// TestInsufficientStorage: a write the disk cannot hold answers 507
// insufficient_storage with the reason, for SQLite's SQLITE_FULL and the
// system's ENOSPC alike, not a generic 500; reads go on.
func TestInsufficientStorage(t *testing.T) {
	full := driverFull(t)
	if !strings.Contains(full.Error(), "full") {
		t.Fatalf("the driver's error for a full file: %v", full)
	}
	for _, c := range []struct {
		name string
		err  error
	}{
		{"SQLITE_FULL", fmt.Errorf("commit: %w: %w", sqlite.ErrFull, full)},
		{"ENOSPC", &os.PathError{Op: "write", Path: "/var/lib/engram/engram.db-wal", Err: syscall.ENOSPC}},
	} {
		t.Run(c.name, func(t *testing.T) {
			be, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "f.db"), sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			db, err := engram.OpenBackend(t.Context(), fullDisk{be, c.err}, engram.Options{NoEmbedder: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			_, ts := startServer(t, db, Config{})
			hc := ts.Client()
			for _, r := range []struct{ method, path string }{{"POST", "/v1/memories"}, {"POST", "/v1/import"}, {"DELETE", "/v1/memories/m1"}} {
				body := any(map[string]any{"id": "m1", "text": "a note"})
				if r.path == "/v1/import" {
					body = `{"text":"a note"}` + "\n"
				}
				if r.method == "DELETE" {
					body = nil
				}
				got := call(t, hc, ts.URL, r.method, r.path, "", body)
				if got.status != http.StatusInsufficientStorage || got.errCode() != CodeInsufficientStorage ||
					!strings.Contains(string(got.body), "disk") || strings.Contains(string(got.body), "/var/lib") {
					t.Errorf("%s %s: %d %s, want 507 insufficient_storage saying the disk is full (and no path)", r.method, r.path, got.status, got.body)
				}
			}
			mustJSON(t, call(t, hc, ts.URL, "GET", "/v1/memories", "", nil), http.StatusOK, nil)
		})
	}
	if e, _ := toError(errors.New("database or disk is full")); e.Status != http.StatusInternalServerError {
		t.Errorf("a message alone is no full disk: %d", e.Status)
	}
}
