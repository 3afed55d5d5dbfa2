package store

// Doctor: what is wrong with a store file, in words a user can act on, and
// the repairs that lose nothing. It reads the file without the checks Open
// makes (so a file Open refuses can still be examined), and writes only with
// repair, in one transaction whose changes are logged, so a running server
// picks them up.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/engram-memory/engram/memory"
)

// Finding is one thing Doctor found.
type Finding struct {
	// What is wrong, and where.
	Problem string `json:"problem"`
	// Fix says what repair does about it, or what the user can do.
	Fix string `json:"fix"`
	// Fixed: repair did it.
	Fixed bool `json:"fixed"`
}

// Report is what Doctor found in a file.
type Report struct {
	Path     string    `json:"path"`
	Schema   int       `json:"schema"`   // PRAGMA user_version as found
	Detected int       `json:"detected"` // the schema the tables are (0: none, -1: unknown)
	Rows     int       `json:"rows"`     // rows of memories
	Findings []Finding `json:"findings"`
}

// OK reports whether nothing is wrong.
func (r *Report) OK() bool { return len(r.Findings) == 0 }

func (r *Report) add(problem, fix string, fixed bool) {
	r.Findings = append(r.Findings, Finding{Problem: problem, Fix: fix, Fixed: fixed})
}

// Doctor examines the store at path and, with repair, fixes what can be
// fixed without losing anything: a reset schema version (when the tables say
// which it is), counters out of range (the nearest valid value), vectors that
// cannot be read (cleared: engram reindex makes new ones), metadata or tags
// that are no JSON (kept as text under metadata's "engram_doctor" key), scopes
// not in canonical form, and leftovers of snapshot writes that died. Rows
// whose scope or times cannot be read are reported, never guessed at: export
// skips them, and the report shows how to remove them.
func Doctor(ctx context.Context, path string, repair bool) (*Report, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("doctor %s: %w: %v", path, ErrBadPath, errors.Unwrap(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("doctor %s: %w: not a regular file", path, ErrBadPath)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Set("_txlock", "immediate")
	if !repair {
		q.Set("mode", "ro")
	}
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("doctor %s: %w", path, err)
	}
	defer db.Close()
	s := &Store{db: db, path: path}
	r := &Report{Path: path, Detected: -1}
	appID, version, tables, err := s.header(ctx)
	if err != nil {
		return nil, fmt.Errorf("doctor %s: %w", path, err)
	}
	r.Schema = version
	if appID != 0 && appID != applicationID {
		return nil, fmt.Errorf("doctor %s: %w (SQLite application_id %#x)", path, ErrNotEngram, appID)
	}
	r.Detected, err = detectSchema(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("doctor %s: %w", path, err)
	}
	if r.Detected == 0 {
		if tables > 0 {
			return nil, fmt.Errorf("doctor %s: %w (a SQLite file without Engram's tables)", path, ErrNotEngram)
		}
		return r, nil // an empty file: a new store
	}
	if version != r.Detected {
		fix := fmt.Sprintf("repair sets it to %d, the schema the tables are", r.Detected)
		fixed := false
		if repair {
			if _, err := db.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d; PRAGMA user_version = %d", applicationID, r.Detected)); err != nil {
				return nil, fmt.Errorf("doctor %s: restore the schema version: %w", path, err)
			}
			fixed = true
		}
		r.add(fmt.Sprintf("schema version (PRAGMA user_version) is %d but the tables are schema %d", version, r.Detected), fix, fixed)
	}
	if r.Detected < SchemaVersion {
		r.add(fmt.Sprintf("schema %d: this build uses %d", r.Detected, SchemaVersion), "the next open with write access upgrades it in place", false)
		return r, nil // row checks below read this build's schema
	}
	var check string
	if err := db.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&check); err != nil {
		return nil, fmt.Errorf("doctor %s: %w", path, err)
	}
	if check != "ok" {
		r.add("SQLite's quick_check reports damage: "+check, "export what is readable (engram export) into a new store (engram --db NEW import)", false)
	}
	var bad []BadRow
	var oldScopes []*memory.Memory // read, but of a scope new writes refuse
	if err := s.Scan(ctx, func(m *memory.Memory) error {
		r.Rows++
		if memory.ValidateScope(m.Scope) != nil {
			oldScopes = append(oldScopes, m)
		}
		return nil
	}, func(b BadRow) {
		bad = append(bad, b)
		if b.Skipped {
			r.Rows++
		}
	}); err != nil {
		return nil, fmt.Errorf("doctor %s: %w", path, err)
	}
	if repair && len(bad) > 0 {
		if err := s.write(ctx, func(tx *sql.Tx) error { return repairRows(ctx, tx, bad) }); err != nil {
			return nil, fmt.Errorf("doctor %s: repair: %w", path, err)
		}
	}
	for _, b := range bad {
		where := fmt.Sprintf("memory %q (scope %s): ", b.ID, b.Scope)
		switch {
		case b.Skipped && strings.Contains(b.Problem, "canonical form"):
			r.add(where+b.Problem, "repair rewrites the scope in canonical form", repair)
		case b.Skipped:
			r.add(where+b.Problem+"; it is left out of searches and exports",
				fmt.Sprintf("not repairable without guessing; remove it with: sqlite3 %s \"DELETE FROM memories WHERE id = '%s'\"", path, strings.ReplaceAll(b.ID, "'", "''")), false)
		default:
			r.add(where+b.Problem, "repair stores the readable value (metadata keeps what was unreadable)", repair)
		}
	}
	for _, m := range oldScopes {
		err := memory.ValidateScope(m.Scope)
		r.add(fmt.Sprintf("memory %q (scope %s): %v; it was stored before such scopes were refused, and reads and deletes as it is",
			m.ID, memory.ScopeJSON(m.Scope), err),
			fmt.Sprintf("move it to a scope without it: engram update %s --scope KEY=VALUE,... (or delete it: engram delete %s)", m.ID, m.ID), false)
	}
	matches, _ := filepath.Glob(path + ".idx.tmp*")
	for _, m := range matches {
		if fi, err := os.Stat(m); err == nil && time.Since(fi.ModTime()) > time.Minute {
			fixed := false
			if repair {
				fixed = os.Remove(m) == nil
			}
			r.add(fmt.Sprintf("%s (%d bytes) is the leftover of a snapshot write that did not finish", m, fi.Size()), "repair deletes it", fixed)
		}
	}
	return r, nil
}

// detectSchema says which schema the tables are: 4 when memories have a
// text_key column, 3 an episode column, 2 when the change log names scopes,
// 1 with a memories table, 0 without one.
func detectSchema(ctx context.Context, db *sql.DB) (int, error) {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'memories'`).Scan(&n); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, nil
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('memories') WHERE name = 'text_key'`).Scan(&n); err != nil {
		return 0, err
	}
	if n > 0 {
		return 4, nil
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('memories') WHERE name = 'episode'`).Scan(&n); err != nil {
		return 0, err
	}
	if n > 0 {
		return 3, nil
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('changes') WHERE name = 'scope'`).Scan(&n); err != nil {
		return 0, err
	}
	if n > 0 {
		return 2, nil
	}
	return 1, nil
}

// repairRows rewrites the damaged rows as they read (decodeRow's value for
// each damaged part), keeping unreadable text under metadata's
// "engram_doctor" key, and canonicalises scopes whose key is free.
func repairRows(ctx context.Context, tx *sql.Tx, bad []BadRow) error {
	for _, b := range bad {
		if b.Skipped && !strings.Contains(b.Problem, "canonical form") {
			continue
		}
		var rawTags, rawMeta string
		if err := tx.QueryRowContext(ctx, `SELECT CAST(tags AS TEXT), CAST(metadata AS TEXT) FROM memories WHERE id = ? AND scope = ?`, b.ID, b.Scope).Scan(&rawTags, &rawMeta); err != nil {
			return fmt.Errorf("memory %s: %w", b.ID, err)
		}
		if b.Skipped { // a scope not in canonical form
			sc, err := parseScope(b.Scope)
			if err != nil {
				continue
			}
			canon := memory.ScopeJSON(sc)
			var taken int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM memories WHERE id = ? AND scope = ?`, b.ID, canon).Scan(&taken); err != nil {
				return err
			}
			if taken > 0 {
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE memories SET scope = ? WHERE id = ? AND scope = ?`, canon, b.ID, b.Scope); err != nil {
				return err
			}
			// Both keys: a running process re-reads the row under its old
			// key (gone: no longer a bad row) and its new one.
			if _, err := logChange(ctx, tx, b.ID, b.Scope, OpDelete); err != nil {
				return err
			}
			if _, err := logChange(ctx, tx, b.ID, canon, OpPut); err != nil {
				return err
			}
			continue
		}
		m, _, err := readOne(ctx, tx, `SELECT `+memoryColumns+` FROM memories WHERE id = ? AND scope = ?`, b.ID, b.Scope)
		if err != nil || m == nil {
			continue
		}
		keep := map[string]string{}
		if rawMeta != "" && m.Metadata == nil {
			keep["metadata"] = rawMeta
		}
		if rawTags != "" && m.Tags == nil && rawTags != "[]" {
			var tags []string
			if json.Unmarshal([]byte(rawTags), &tags) != nil {
				keep["tags"] = rawTags
			}
		}
		if len(keep) > 0 {
			meta := map[string]any{}
			if m.Metadata != nil {
				_ = json.Unmarshal(m.Metadata, &meta)
			}
			meta["engram_doctor"] = keep
			data, err := json.Marshal(meta)
			if err != nil {
				return err
			}
			m.Metadata = data
		}
		args, err := rowArgs(m)
		if err != nil {
			return fmt.Errorf("memory %s: %w", b.ID, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO memories (`+writeColumns+`) VALUES `+writePlaceholders, args...); err != nil {
			return fmt.Errorf("memory %s: %w", b.ID, err)
		}
		if _, err := logChange(ctx, tx, b.ID, b.Scope, OpPut); err != nil {
			return err
		}
	}
	return nil
}
