// Package store keeps memories in one SQLite file (modernc.org/sqlite, pure Go):
// rows, embeddings as little-endian float32 BLOBs, a change log that lets several
// processes keep their in-memory indexes in step, settings and the embedding cache.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// SchemaVersion is the schema this code writes; files with a newer one are refused.
const SchemaVersion = 1

// applicationID marks a SQLite file as Engram's (PRAGMA application_id, "ENGR").
const applicationID = 0x454e4752

// Errors a caller can test with errors.Is.
var (
	ErrNotEngram   = errors.New("not an Engram database")
	ErrNewerSchema = errors.New("database schema is newer than this engram")
	ErrBadPath     = errors.New("unusable database path")
)

// Store is an open Engram database file. It is safe for concurrent use, and
// other processes may use the same file at the same time.
type Store struct {
	db   *sql.DB
	path string
	// rowsRead counts the rows of memories read, whole or in part.
	rowsRead atomic.Int64
}

// Open opens or creates the database at path.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("open database: empty path")
	}
	if err := checkPath(path); err != nil {
		return nil, err
	}
	q := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(NORMAL)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	s := &Store{db: db, path: path}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	s.ensureIndexes(ctx)
	return s, nil
}

// ensureIndexes adds the indexes later code relies on for speed to a file
// that lacks them (an older file; nothing in the schema changes, so older
// builds read it as before). A file that cannot be written keeps working
// without them, only slower.
func (s *Store) ensureIndexes(ctx context.Context) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'memories_content'`).Scan(&n)
	if err != nil || n > 0 {
		return
	}
	// Exact duplicates (PutMerging) are found by content hash, then scope.
	_, _ = s.db.ExecContext(ctx, `CREATE INDEX IF NOT EXISTS memories_content ON memories (content_hash)`)
}

// checkPath gives clear errors for the common ways a path is wrong, before
// SQLite reports them as "unable to open database file".
func checkPath(path string) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("open database %s: %w: %s", path, ErrBadPath, fmt.Sprintf(format, a...))
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return bad("directory %s does not exist", dir)
	}
	if !st.IsDir() {
		return bad("%s is not a directory", dir)
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		// Creating it: the directory must be writable.
		probe, err := os.CreateTemp(dir, ".engram-probe-*")
		if err != nil {
			return bad("cannot create files in %s (%v)", dir, errors.Unwrap(err))
		}
		probe.Close()
		os.Remove(probe.Name())
		return nil
	}
	if err != nil {
		return bad("%v", errors.Unwrap(err))
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return bad("it is a directory")
	}
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	if n == 0 {
		return nil // empty file: becomes a new database
	}
	if n < 16 || string(head) != "SQLite format 3\x00" {
		return fmt.Errorf("open database %s: %w (not a SQLite file)", path, ErrNotEngram)
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Path is the file's path.
func (s *Store) Path() string { return s.path }

// RowsRead is how many rows of memories this handle has read since Open,
// whole or in part (a use count, a scope check): a diagnostic for tests and
// benchmarks that bound the reads an operation makes.
func (s *Store) RowsRead() int64 { return s.rowsRead.Load() }

const schemaV1 = `
CREATE TABLE memories (
	id           TEXT PRIMARY KEY,
	name         TEXT NOT NULL DEFAULT '',
	description  TEXT NOT NULL DEFAULT '',
	text         TEXT NOT NULL,
	type         TEXT NOT NULL,
	scene        TEXT NOT NULL DEFAULT '',
	scope        TEXT NOT NULL DEFAULT '{}',
	tags         TEXT NOT NULL DEFAULT '[]',
	source       TEXT NOT NULL DEFAULT '',
	metadata     TEXT NOT NULL DEFAULT '',
	favorite     INTEGER NOT NULL DEFAULT 0,
	created_at   INTEGER NOT NULL,
	updated_at   INTEGER NOT NULL,
	uses         INTEGER NOT NULL DEFAULT 0,
	demand       REAL NOT NULL DEFAULT 0,
	demand_at    INTEGER,
	content_hash TEXT NOT NULL DEFAULT '',
	embed_model  TEXT,
	embed_dim    INTEGER,
	embedding    BLOB
);
CREATE TABLE changes (
	seq INTEGER PRIMARY KEY AUTOINCREMENT,
	id  TEXT NOT NULL,
	op  TEXT NOT NULL
);
CREATE TABLE settings (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
CREATE TABLE embed_cache (
	model TEXT NOT NULL,
	hash  TEXT NOT NULL,
	vec   BLOB NOT NULL,
	PRIMARY KEY (model, hash)
) WITHOUT ROWID;
`

// migrations[i] takes the schema from version i to i+1.
var migrations = []string{schemaV1}

func (s *Store) migrate(ctx context.Context) error {
	var appID, version int
	if err := s.db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		if strings.Contains(err.Error(), "not a database") {
			return fmt.Errorf("%w (not a SQLite file)", ErrNotEngram)
		}
		return fmt.Errorf("read application_id: %w", err)
	}
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if appID != 0 && appID != applicationID {
		return fmt.Errorf("%w (SQLite application_id %#x)", ErrNotEngram, appID)
	}
	if appID == 0 {
		var tables int
		if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&tables); err != nil {
			return fmt.Errorf("inspect schema: %w", err)
		}
		if tables > 0 {
			return fmt.Errorf("%w (a SQLite file with %d other objects)", ErrNotEngram, tables)
		}
	}
	if version > SchemaVersion {
		return fmt.Errorf("%w: file has schema %d, this build knows up to %d", ErrNewerSchema, version, SchemaVersion)
	}
	for v := version; v < SchemaVersion; v++ {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migrate to schema %d: %w", v+1, err)
		}
		// Re-check inside the write lock: another process may have migrated.
		var cur int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&cur); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate to schema %d: %w", v+1, err)
		}
		if cur > v {
			tx.Rollback()
			continue
		}
		stmts := migrations[v] + fmt.Sprintf("\nPRAGMA application_id = %d;\nPRAGMA user_version = %d;", applicationID, v+1)
		if _, err := tx.ExecContext(ctx, stmts); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate to schema %d: %w", v+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrate to schema %d: %w", v+1, err)
		}
	}
	return nil
}
