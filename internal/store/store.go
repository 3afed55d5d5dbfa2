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
	"sync"
	"sync/atomic"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/engram-memory/engram/memory"
)

// SchemaVersion is the schema this code writes; files with a newer one are
// refused, older ones upgraded in place by Open. Version 2 keys memories by
// (id, scope): ids are per-scope namespaces (memory.Key); version 3 adds the
// episode fields (episode, seq, speaker, occurred_at) and supersedes.
// Version 4 adds text_key, the key exact duplicates are found by
// (memory.TextKey).
const SchemaVersion = 4

// applicationID marks a SQLite file as Engram's (PRAGMA application_id, "ENGR").
const applicationID = 0x454e4752

// Errors a caller can test with errors.Is.
var (
	ErrNotEngram   = errors.New("not an Engram database")
	ErrNewerSchema = errors.New("database schema is newer than this engram")
	ErrBadPath     = errors.New("unusable database path")
	// ErrReadOnly is returned by every write to a store opened read-only (a
	// file or directory this process may not write).
	ErrReadOnly = errors.New("the store is read-only")
)

// Store is an open Engram database file. It is safe for concurrent use, and
// other processes may use the same file at the same time.
type Store struct {
	db       *sql.DB
	path     string
	readOnly bool
	// rowsRead counts the rows of memories read, whole or in part.
	rowsRead atomic.Int64

	stmtMu sync.Mutex // guards changesStmt
	// changesStmt is the change-log read every search's catch-up runs,
	// prepared once (parsing it was 16% of a keyword search); nil until first use.
	changesStmt *sql.Stmt

	verMu sync.Mutex // guards verConn, verStmt, verGen and settings
	// verConn is a connection kept for PRAGMA data_version, which never
	// writes: the number it reads changes whenever any other connection, of
	// this process or another, commits to the file. nil until first use, or
	// after an error; verGen counts the connections, since their numbers are
	// not comparable.
	verConn *sql.Conn
	verStmt *sql.Stmt
	verGen  uint64
	// settings caches setting reads by the Version they were read at.
	settings map[string]cachedSetting
}

// Open opens or creates the database at path. A file or directory this
// process may not write is opened read-only (ReadOnly): reads and exports
// work, writes fail with ErrReadOnly.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("open database: empty path")
	}
	readOnly, err := checkPath(path)
	if err != nil {
		return nil, err
	}
	if readOnly {
		return openReadOnly(ctx, path)
	}
	q := url.Values{}
	if err := create(ctx, path); err != nil {
		return nil, err
	}
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

// PageSize is the page size of the files Open creates. A row holds a
// memory's text and its float32 vector, 2.4 KB at 512 dimensions, 1.9 KB at
// 384: 8 KiB pages hold three or four of them, where 4 KiB pages (SQLite's
// default) hold one 2.4 KB row and leave 40% of the file unused (dbstat, on
// engram bench's 100k store). Existing files keep their page size.
const PageSize = 8192

// create makes a new, empty database file with PageSize pages, in WAL mode;
// it does nothing when path exists. The page size can only be set before
// the first page is written, which the connection options' pragmas would do
// first (the driver runs journal_mode before page_size).
func create(ctx context.Context, path string) error {
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return fmt.Errorf("create database %s: %w", path, err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("create database %s: %w", path, err)
	}
	defer conn.Close()
	for _, q := range []string{fmt.Sprintf("PRAGMA page_size = %d", PageSize), "PRAGMA journal_mode = WAL"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("create database %s: %s: %w", path, q, err)
		}
	}
	return nil
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

// openReadOnly opens an existing file without writing anything next to it.
// SQLite's read-only mode still needs the write-ahead log's shared-memory
// file; where that cannot be made (a read-only directory) the file is opened
// immutable, which is exact only when no write-ahead log holds commits the
// file lacks: then the error says so instead of exporting a stale store.
func openReadOnly(ctx context.Context, path string) (*Store, error) {
	try := func(immutable bool) (*Store, error) {
		q := url.Values{}
		q.Add("_pragma", "busy_timeout(10000)")
		q.Set("mode", "ro")
		if immutable {
			q.Set("immutable", "1")
		}
		db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
		if err != nil {
			return nil, err
		}
		s := &Store{db: db, path: path, readOnly: true}
		if err := s.checkSchema(ctx); err != nil {
			db.Close()
			return nil, err
		}
		return s, nil
	}
	s, err := try(false)
	if err == nil || errors.Is(err, ErrNotEngram) || errors.Is(err, ErrNewerSchema) || errors.Is(err, ErrOldSchema) {
		if err != nil {
			return nil, fmt.Errorf("open database %s (read-only): %w", path, err)
		}
		return s, nil
	}
	if fi, werr := os.Stat(path + "-wal"); werr == nil && fi.Size() > 0 {
		return nil, fmt.Errorf("open database %s: %w: it is read-only and its write-ahead log %s-wal holds changes it cannot read without write access (%v)", path, ErrBadPath, path, err)
	}
	s, err = try(true)
	if err != nil {
		return nil, fmt.Errorf("open database %s (read-only): %w", path, err)
	}
	return s, nil
}

// ReadOnly reports whether the store was opened read-only.
func (s *Store) ReadOnly() bool { return s.readOnly }

// checkPath gives clear errors for the common ways a path is wrong, before
// SQLite reports them as "unable to open database file" (or blocks forever
// opening a FIFO), and says whether an existing file must be opened
// read-only because this process may not write it or its directory.
func checkPath(path string) (readOnly bool, err error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("open database %s: %w: %s", path, ErrBadPath, fmt.Sprintf(format, a...))
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return false, bad("directory %s does not exist", dir)
	}
	if !st.IsDir() {
		return false, bad("%s is not a directory", dir)
	}
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		// Creating it: the directory must be writable.
		probe, err := os.CreateTemp(dir, ".engram-probe-*")
		if err != nil {
			return false, bad("cannot create files in %s (%v)", dir, errors.Unwrap(err))
		}
		probe.Close()
		os.Remove(probe.Name())
		return false, nil
	}
	if err != nil {
		return false, bad("%v", errors.Unwrap(err))
	}
	switch mode := fi.Mode(); {
	case mode.IsDir():
		return false, bad("it is a directory")
	case !mode.IsRegular():
		return false, bad("it is not a regular file (%s)", fileKind(mode))
	}
	f, err := os.Open(path)
	if err != nil {
		return false, bad("%v", errors.Unwrap(err))
	}
	defer f.Close()
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	if n > 0 && (n < 16 || string(head) != "SQLite format 3\x00") {
		return false, fmt.Errorf("open database %s: %w (not a SQLite file)", path, ErrNotEngram)
	}
	if !writable(path, false) || !writable(dir, true) {
		if n == 0 {
			return false, bad("the file is empty and cannot be written, so it cannot become a database")
		}
		return true, nil
	}
	return false, nil
}

// fileKind names what a non-regular file is.
func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	}
	return m.Type().String()
}

// Close closes the database.
func (s *Store) Close() error {
	s.stmtMu.Lock()
	if s.changesStmt != nil {
		s.changesStmt.Close()
		s.changesStmt = nil
	}
	s.stmtMu.Unlock()
	s.verMu.Lock()
	s.dropVersionConn()
	s.verMu.Unlock()
	return s.db.Close()
}

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

// schemaV2 keys memories by (id, scope): ids are per-scope namespaces
// (memory.Key), so one tenant's id never collides with another's. The change
// log names each change's scope. Scopes are canonical (memory.ScopeJSON)
// before the copy, so the key means what the row means.
const schemaV2 = `
CREATE TABLE memories_v2 (
	id           TEXT NOT NULL,
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
	embedding    BLOB,
	PRIMARY KEY (id, scope)
);
INSERT INTO memories_v2 (` + memoryColumnsV2 + `) SELECT ` + memoryColumnsV2 + ` FROM memories;
DROP TABLE memories;
ALTER TABLE memories_v2 RENAME TO memories;
ALTER TABLE changes ADD COLUMN scope TEXT;
`

// schemaV3 adds the episode fields and supersession. A memory stored before
// it occurred when it was created.
const schemaV3 = `
ALTER TABLE memories ADD COLUMN episode TEXT NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE memories ADD COLUMN speaker TEXT NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN occurred_at INTEGER;
ALTER TABLE memories ADD COLUMN supersedes TEXT NOT NULL DEFAULT '';
UPDATE memories SET occurred_at = created_at;
`

// schemaV4 adds the text key exact duplicates are found by (filled by
// fillTextKeys), indexed with the scope they are compared in.
const schemaV4 = `
ALTER TABLE memories ADD COLUMN text_key TEXT NOT NULL DEFAULT '';
CREATE INDEX memories_text_key ON memories (scope, text_key);
`

// migration takes the schema one version up: fix runs first, in the same
// transaction, then the statements, then after.
type migration struct {
	fix   func(ctx context.Context, tx *sql.Tx) error
	stmt  string
	after func(ctx context.Context, tx *sql.Tx) error
}

// migrations[i] takes the schema from version i to i+1.
var migrations = []migration{{stmt: schemaV1}, {fix: canonicalScopes, stmt: schemaV2}, {stmt: schemaV3},
	{stmt: schemaV4, after: fillTextKeys}}

// fillTextKeys sets every memory's text key (memory.TextKey of its text).
func fillTextKeys(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT rowid, text FROM memories`)
	if err != nil {
		return err
	}
	keys := map[int64]string{}
	for rows.Next() {
		var id int64
		var text string
		if err := rows.Scan(&id, &text); err != nil {
			rows.Close()
			return err
		}
		keys[id] = memory.TextKey(text)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	stmt, err := tx.PrepareContext(ctx, `UPDATE memories SET text_key = ? WHERE rowid = ?`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for id, k := range keys {
		if _, err := stmt.ExecContext(ctx, k, id); err != nil {
			return err
		}
	}
	return nil
}

// canonicalScopes rewrites every scope that parses but is not in canonical
// form (hand-edited rows); unparsable ones are left for the bad-row report.
func canonicalScopes(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, scope FROM memories`)
	if err != nil {
		return err
	}
	fix := map[string]string{}
	for rows.Next() {
		var id, raw string
		if err := rows.Scan(&id, &raw); err != nil {
			rows.Close()
			return err
		}
		if scope, err := parseScope(raw); err == nil {
			if c := memory.ScopeJSON(scope); c != raw {
				fix[id] = c
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for id, c := range fix {
		if _, err := tx.ExecContext(ctx, `UPDATE memories SET scope = ? WHERE id = ?`, c, id); err != nil {
			return err
		}
	}
	return nil
}

// Errors about a file's schema version, for errors.Is.
var (
	// ErrOldSchema: a read-only file of an older schema, which only a
	// writable open upgrades.
	ErrOldSchema = errors.New("database schema is older than this engram")
	// ErrDamaged: the file's header contradicts its contents.
	ErrDamaged = errors.New("damaged Engram database")
)

// header reads the file's application id, schema version and table count.
func (s *Store) header(ctx context.Context) (appID, version, tables int, err error) {
	if err := s.db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		if strings.Contains(err.Error(), "not a database") {
			return 0, 0, 0, fmt.Errorf("%w (not a SQLite file)", ErrNotEngram)
		}
		return 0, 0, 0, fmt.Errorf("read application_id: %w", err)
	}
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return 0, 0, 0, fmt.Errorf("read schema version: %w", err)
	}
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&tables); err != nil {
		return 0, 0, 0, fmt.Errorf("inspect schema: %w", err)
	}
	return appID, version, tables, nil
}

// checkHeader refuses what no version of this code can open.
func checkHeader(appID, version, tables int) error {
	if appID != 0 && appID != applicationID {
		return fmt.Errorf("%w (SQLite application_id %#x)", ErrNotEngram, appID)
	}
	if appID == 0 && tables > 0 {
		return fmt.Errorf("%w (a SQLite file with %d other objects)", ErrNotEngram, tables)
	}
	if version < 0 {
		return fmt.Errorf("%w: schema version (PRAGMA user_version) %d is negative; engram doctor explains, engram doctor --repair restores it", ErrDamaged, version)
	}
	if version > SchemaVersion {
		return fmt.Errorf("%w: file has schema %d, this build knows up to %d", ErrNewerSchema, version, SchemaVersion)
	}
	if version == 0 && tables > 0 {
		return fmt.Errorf("%w: schema version (PRAGMA user_version) is 0 but the file holds Engram's tables; engram doctor explains, engram doctor --repair restores it", ErrDamaged)
	}
	return nil
}

// checkSchema is the read-only open's check: the file must be at this
// build's schema, since it cannot be upgraded.
func (s *Store) checkSchema(ctx context.Context) error {
	appID, version, tables, err := s.header(ctx)
	if err != nil {
		return err
	}
	if err := checkHeader(appID, version, tables); err != nil {
		return err
	}
	if version < SchemaVersion {
		return fmt.Errorf("%w: file has schema %d, this build reads %d; open it once with write access to upgrade it", ErrOldSchema, version, SchemaVersion)
	}
	return nil
}

func (s *Store) migrate(ctx context.Context) error {
	appID, version, tables, err := s.header(ctx)
	if err != nil {
		return err
	}
	if err := checkHeader(appID, version, tables); err != nil {
		return err
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
		mig := migrations[v]
		if mig.fix != nil {
			if err := mig.fix(ctx, tx); err != nil {
				tx.Rollback()
				return fmt.Errorf("migrate to schema %d: %w", v+1, err)
			}
		}
		stmts := mig.stmt + fmt.Sprintf("\nPRAGMA application_id = %d;\nPRAGMA user_version = %d;", applicationID, v+1)
		if _, err := tx.ExecContext(ctx, stmts); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate to schema %d: %w", v+1, err)
		}
		if mig.after != nil {
			if err := mig.after(ctx, tx); err != nil {
				tx.Rollback()
				return fmt.Errorf("migrate to schema %d: %w", v+1, err)
			}
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrate to schema %d: %w", v+1, err)
		}
	}
	return nil
}
