package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/engram-memory/engram/memory"
)

// Change ops in the change log.
const (
	OpPut    = "put"
	OpDelete = "delete"
	// OpUse changes only a memory's use statistics (uses, demand): readers
	// may update those in place of re-indexing the memory.
	OpUse = "use"
	// OpSetting changes a store setting; the change's ID is the setting's key.
	OpSetting = "setting"
)

// Change is one entry of the change log: the memory with ID in Scope (its
// ScopeJSON) was written, deleted or used, or (OpSetting) the setting named
// by ID changed. Scope is empty for a setting, and for a memory change logged
// by a build older than schema 2, which named the id only.
type Change struct {
	Seq   int64
	ID    string
	Scope string
	Op    string
}

// Key is the changed memory's key (memory.Key); "" when the change names no
// scope.
func (c Change) Key() string {
	if c.Scope == "" {
		return ""
	}
	return c.ID + "\x00" + c.Scope
}

// memoryColumnsV2 are the columns of schema 2, which the migration to it copies.
const memoryColumnsV2 = `id, name, description, text, type, scene, scope, tags, source, metadata, favorite,
	created_at, updated_at, uses, demand, demand_at, content_hash, embed_model, embed_dim, embedding`

// memoryColumns are the columns every read and write of a whole row names,
// in the order rowArgs and decodeRow use.
const memoryColumns = memoryColumnsV2 + `, episode, seq, speaker, occurred_at, supersedes`

// rowPlaceholders are the parameters of an insert of memoryColumns.
const rowPlaceholders = `(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`

// writeColumns are the columns every write of a whole row sets: memoryColumns
// and the text key duplicates are found by (memory.TextKey), which no read
// needs; rowArgs gives them in this order.
const writeColumns = memoryColumns + `, text_key`

// writePlaceholders are the parameters of an insert of writeColumns.
const writePlaceholders = `(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`

// Memories are named by (id, scope) (memory.Key). A caller addresses one by
// id within its scope by the rule memory.ErrAmbiguous documents: the row with
// exactly its scope, else the only one inside it. Every read-modify-write
// resolves and changes the row inside one write transaction.

// Put inserts or replaces memories in one transaction: either all are stored
// or none. Each memory must already be normalised and carry an id and times;
// it replaces only the memory with its id in its own scope. With a scope (a
// tenant's), every memory must lie inside it. It returns the change-log
// sequence numbers the write took, first to last: one per memory, contiguous,
// since the transaction holds the write lock.
func (s *Store) Put(ctx context.Context, scope map[string]string, mems []*memory.Memory) (first, last int64, err error) {
	if len(mems) == 0 {
		return 0, 0, nil
	}
	if err := checkInside(scope, mems); err != nil {
		return 0, 0, err
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		first, last, err = s.put(ctx, tx, mems)
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	return first, last, nil
}

// PutMerging is Put for memories that may repeat one already stored: each
// memory i with mergeable[i] whose text key (memory.TextKey) and exact scope
// equal a stored memory's is not stored, and existing[i] names that memory
// (the least id when several do); merge, when not nil, gives what the stored
// memory becomes (nil: unchanged), written in place. The look-up, the merge
// and the write are one transaction, so two processes adding the same memory
// at once store it once and neither's merge is lost. written is what was
// written, in order (new memories and merged ones), which the change-log
// range first to last covers (0, 0 for nothing).
func (s *Store) PutMerging(ctx context.Context, scope map[string]string, mems []*memory.Memory, mergeable []bool,
	merge func(i int, stored *memory.Memory) (*memory.Memory, error)) (existing []string, written []*memory.Memory, first, last int64, err error) {
	if err := checkInside(scope, mems); err != nil {
		return nil, nil, 0, 0, err
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		existing = make([]string, len(mems))
		written = written[:0]
		merged := map[string]int{} // key -> index in written of a stored memory merged into
		for i, m := range mems {
			if i < len(mergeable) && mergeable[i] {
				stored, err := s.sameText(ctx, tx, m)
				if err != nil {
					return err
				}
				if stored != nil {
					existing[i] = stored.ID
					if merge == nil {
						continue
					}
					if j, ok := merged[stored.Key()]; ok { // merged into earlier in this call
						stored = written[j]
					}
					upd, err := merge(i, stored)
					if err != nil {
						return fmt.Errorf("merge memory %d into %s: %w", i+1, stored.ID, err)
					}
					if upd == nil {
						continue
					}
					if upd.ID != stored.ID || memory.ScopeJSON(upd.Scope) != memory.ScopeJSON(stored.Scope) {
						return fmt.Errorf("merge memory %d into %s: the merge changed its key", i+1, stored.ID)
					}
					if j, ok := merged[stored.Key()]; ok {
						written[j] = upd
					} else {
						merged[stored.Key()] = len(written)
						written = append(written, upd)
					}
					continue
				}
			}
			written = append(written, m)
		}
		first, last = 0, 0
		if len(written) == 0 {
			return nil
		}
		first, last, err = s.put(ctx, tx, written)
		return err
	})
	if err != nil {
		return nil, nil, 0, 0, err
	}
	return existing, written, first, last, nil
}

// sameText returns the stored memory (whole) with m's text key and exactly
// m's scope, or nil (the least id when there are several). A row that cannot
// be read as it is is passed over, as every read does.
func (s *Store) sameText(ctx context.Context, tx *sql.Tx, m *memory.Memory) (*memory.Memory, error) {
	got, _, err := readOne(ctx, tx, `SELECT `+memoryColumns+` FROM memories WHERE text_key = ? AND scope = ? ORDER BY id LIMIT 1`,
		memory.TextKey(m.Text), memory.ScopeJSON(m.Scope)) // as rowArgs stores them
	if err != nil {
		return nil, fmt.Errorf("look for a duplicate of memory %s: %w", m.ID, err)
	}
	if got != nil {
		s.rowsRead.Add(1)
	}
	return got, nil
}

// checkInside refuses memories whose scope lies outside the caller's.
func checkInside(scope map[string]string, mems []*memory.Memory) error {
	for _, m := range mems {
		if !memory.Inside(m.Scope, scope) {
			return fmt.Errorf("%w: memory %s: scope %s lies outside %s", memory.ErrInvalid, m.ID, memory.ScopeJSON(m.Scope), memory.ScopeJSON(scope))
		}
	}
	return nil
}

// put is Put inside the caller's write transaction: each memory replaces the
// one with its key (id and scope), and its change is logged.
func (s *Store) put(ctx context.Context, tx *sql.Tx, mems []*memory.Memory) (first, last int64, err error) {
	stmt, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO memories (`+writeColumns+`) VALUES `+writePlaceholders)
	if err != nil {
		return 0, 0, err
	}
	defer stmt.Close()
	for _, m := range mems {
		args, err := rowArgs(m)
		if err != nil {
			return 0, 0, fmt.Errorf("memory %s: %w", m.ID, err)
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return 0, 0, fmt.Errorf("store memory %s: %w", m.ID, err)
		}
		if last, err = logChange(ctx, tx, m.ID, args[6].(string), OpPut); err != nil {
			return 0, 0, err
		}
	}
	return last - int64(len(mems)) + 1, last, nil
}

// logChange appends one entry to the change log and returns its seq.
func logChange(ctx context.Context, tx *sql.Tx, id, scope, op string) (int64, error) {
	res, err := tx.ExecContext(ctx, `INSERT INTO changes (id, scope, op) VALUES (?, ?, ?)`, id, scope, op)
	if err != nil {
		return 0, fmt.Errorf("log change: %w", err)
	}
	return res.LastInsertId()
}

// pick applies the id rule (memory.Pick) to the scopes (ScopeJSON) of the
// rows holding one id: the index of the one it names in scope, or -1. Rows
// whose scope cannot be read are invisible (they are bad rows, reported
// elsewhere).
func pick(id string, scopes []string, scope map[string]string) (int, error) {
	readable := make([]map[string]string, 0, len(scopes))
	at := make([]int, 0, len(scopes))
	for i, raw := range scopes {
		sc, err := parseScope(raw)
		if err != nil || memory.ScopeJSON(sc) != raw {
			continue
		}
		readable = append(readable, sc)
		at = append(at, i)
	}
	j, err := memory.Pick(id, scope, readable)
	if j < 0 {
		return -1, err
	}
	return at[j], nil
}

// resolve finds, inside tx, the scope of the row id names in scope (see
// pick); ok is false when there is none.
func (s *Store) resolve(ctx context.Context, tx *sql.Tx, id string, scope map[string]string) (rowScope string, ok bool, err error) {
	rows, err := tx.QueryContext(ctx, `SELECT scope FROM memories WHERE id = ?`, id)
	if err != nil {
		return "", false, fmt.Errorf("read memory %s: %w", id, err)
	}
	var scopes []string
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			rows.Close()
			return "", false, fmt.Errorf("read memory %s: %w", id, err)
		}
		scopes = append(scopes, raw)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", false, fmt.Errorf("read memory %s: %w", id, err)
	}
	s.rowsRead.Add(int64(len(scopes)))
	i, err := pick(id, scopes, scope)
	if err != nil || i < 0 {
		return "", false, err
	}
	return scopes[i], true, nil
}

// Get returns, by id, the memory each id names in scope (nil for the whole
// store); ids that name none are absent. An ambiguous id fails the call
// (memory.ErrAmbiguous). Bad rows are left out.
func (s *Store) Get(ctx context.Context, scope map[string]string, ids []string) (map[string]*memory.Memory, error) {
	out := make(map[string]*memory.Memory, len(ids))
	err := s.byIDs(ctx, ids, func(id string, cands []*memory.Memory) error {
		scopes := make([]string, len(cands))
		for i, m := range cands {
			scopes[i] = memory.ScopeJSON(m.Scope)
		}
		i, err := pick(id, scopes, scope)
		if err != nil {
			return err
		}
		if i >= 0 {
			out[id] = cands[i]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// byIDs reads every readable row holding one of ids, and calls fn once per id
// that has any, with its rows.
func (s *Store) byIDs(ctx context.Context, ids []string, fn func(id string, rows []*memory.Memory) error) error {
	const chunk = 500
	for len(ids) > 0 {
		n := min(chunk, len(ids))
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		rows, err := s.db.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories WHERE id IN (?`+
			strings.Repeat(",?", n-1)+`) ORDER BY id, scope`, args...)
		if err != nil {
			return fmt.Errorf("read memories: %w", err)
		}
		byID := map[string][]*memory.Memory{}
		for rows.Next() {
			m, _, err := s.scanMemory(rows)
			if err != nil {
				rows.Close()
				return fmt.Errorf("read memories: %w", err)
			}
			if m != nil {
				byID[m.ID] = append(byID[m.ID], m)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read memories: %w", err)
		}
		seen := map[string]bool{}
		for _, id := range ids[:n] {
			if cands := byID[id]; len(cands) > 0 && !seen[id] {
				seen[id] = true
				if err := fn(id, cands); err != nil {
					return err
				}
			}
		}
		ids = ids[n:]
	}
	return nil
}

// ByID returns every readable memory with one of ids, in any scope, by id.
func (s *Store) ByID(ctx context.Context, ids []string) (map[string][]*memory.Memory, error) {
	out := map[string][]*memory.Memory{}
	err := s.byIDs(ctx, ids, func(id string, rows []*memory.Memory) error { out[id] = rows; return nil })
	return out, err
}

// GetKeys returns the memories with the given keys (memory.Key) that exist,
// by key, and the bad rows among them (skipped ones absent from the map).
func (s *Store) GetKeys(ctx context.Context, keys []string) (map[string]*memory.Memory, []BadRow, error) {
	want := make(map[string]bool, len(keys))
	ids := make([]string, 0, len(keys))
	for _, k := range keys {
		want[k] = true
		id, _ := memory.SplitKey(k)
		ids = append(ids, id)
	}
	out := make(map[string]*memory.Memory, len(keys))
	var bad []BadRow
	const chunk = 500
	for len(ids) > 0 {
		n := min(chunk, len(ids))
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		rows, err := s.db.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories WHERE id IN (?`+
			strings.Repeat(",?", n-1)+`)`, args...)
		if err != nil {
			return nil, nil, fmt.Errorf("read memories: %w", err)
		}
		for rows.Next() {
			m, b, err := s.scanMemory(rows)
			if err != nil {
				rows.Close()
				return nil, nil, fmt.Errorf("read memories: %w", err)
			}
			if b != nil && want[b.Key()] {
				bad = append(bad, *b)
			}
			if m != nil && want[m.Key()] {
				out[m.Key()] = m
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, nil, fmt.Errorf("read memories: %w", err)
		}
		ids = ids[n:]
	}
	return out, bad, nil
}

// Delete removes, in one transaction, the memories the ids name in scope
// (nil for the whole store) and returns their keys with the change-log
// sequence numbers the write took, first to last (0, 0 when nothing was
// deleted). An ambiguous id fails the whole call and nothing is deleted.
func (s *Store) Delete(ctx context.Context, scope map[string]string, ids []string) (deleted []string, first, last int64, err error) {
	err = s.write(ctx, func(tx *sql.Tx) error {
		deleted = deleted[:0]
		for _, id := range ids {
			rowScope, ok, err := s.resolve(ctx, tx, id, scope)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			res, err := tx.ExecContext(ctx, `DELETE FROM memories WHERE id = ? AND scope = ?`, id, rowScope)
			if err != nil {
				return err
			}
			if k, _ := res.RowsAffected(); k > 0 {
				if last, err = logChange(ctx, tx, id, rowScope, OpDelete); err != nil {
					return err
				}
				deleted = append(deleted, id+"\x00"+rowScope)
			}
		}
		first = last - int64(len(deleted)) + 1
		return nil
	})
	if err != nil || len(deleted) == 0 {
		return nil, 0, 0, err
	}
	return deleted, first, last, nil
}

// DeleteKeys removes, in one transaction, the memories named exactly by
// keys (memory.Key: id and scope) that lie inside scope (nil for the whole
// store), and returns their keys with the change-log sequence numbers the
// write took, as Delete does. A key that names no row, or one outside scope,
// is skipped: an id held in several scopes is never ambiguous here.
func (s *Store) DeleteKeys(ctx context.Context, scope map[string]string, keys []string) (deleted []string, first, last int64, err error) {
	type row struct{ id, scope string }
	rows := make([]row, 0, len(keys))
	for _, k := range keys {
		id, raw := memory.SplitKey(k)
		sc, err := parseScope(raw)
		if err != nil || memory.ScopeJSON(sc) != raw || !memory.Inside(sc, scope) {
			continue
		}
		rows = append(rows, row{id, raw})
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		deleted = deleted[:0]
		for _, r := range rows {
			res, err := tx.ExecContext(ctx, `DELETE FROM memories WHERE id = ? AND scope = ?`, r.id, r.scope)
			if err != nil {
				return err
			}
			if k, _ := res.RowsAffected(); k > 0 {
				if last, err = logChange(ctx, tx, r.id, r.scope, OpDelete); err != nil {
					return err
				}
				deleted = append(deleted, r.id+"\x00"+r.scope)
			}
		}
		first = last - int64(len(deleted)) + 1
		return nil
	})
	if err != nil || len(deleted) == 0 {
		return nil, 0, 0, err
	}
	return deleted, first, last, nil
}

// Scan calls fn for every readable memory in key order (id, then scope) and
// report, when non-nil, for every bad row: skipped ones are not passed to fn,
// damaged ones are, read without the damaged part. It stops at fn's first
// error.
func (s *Store) Scan(ctx context.Context, fn func(*memory.Memory) error, report func(BadRow)) error {
	rows, err := s.db.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories ORDER BY id, scope`)
	if err != nil {
		return fmt.Errorf("scan memories: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		m, bad, err := s.scanMemory(rows)
		if err != nil {
			return fmt.Errorf("scan memories: %w", err)
		}
		if bad != nil && report != nil {
			report(*bad)
		}
		if m == nil {
			continue
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Count returns the number of rows of memories, bad ones included.
func (s *Store) Count(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM memories`).Scan(&n)
	return n, err
}

// LastSeq is the newest change-log sequence number (0 for a new file).
func (s *Store) LastSeq(ctx context.Context) (int64, error) {
	var seq sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT max(seq) FROM changes`).Scan(&seq)
	return seq.Int64, err
}

// Changes returns the change-log entries after seq, oldest first, at most limit.
func (s *Store) Changes(ctx context.Context, after int64, limit int) ([]Change, error) {
	stmt, err := s.changesQuery(ctx)
	if err != nil {
		return nil, fmt.Errorf("read change log: %w", err)
	}
	rows, err := stmt.QueryContext(ctx, after, limit)
	if err != nil {
		return nil, fmt.Errorf("read change log: %w", err)
	}
	defer rows.Close()
	var out []Change
	for rows.Next() {
		var c Change
		var scope sql.NullString
		if err := rows.Scan(&c.Seq, &c.ID, &scope, &c.Op); err != nil {
			return nil, err
		}
		c.Scope = scope.String
		out = append(out, c)
	}
	return out, rows.Err()
}

// changesQuery is the prepared change-log read. A *sql.Stmt is safe for
// concurrent use and prepares itself again on each new connection.
func (s *Store) changesQuery(ctx context.Context) (*sql.Stmt, error) {
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if s.changesStmt == nil {
		stmt, err := s.db.PrepareContext(ctx, `SELECT seq, id, scope, op FROM changes WHERE seq > ? ORDER BY seq LIMIT ?`)
		if err != nil {
			return nil, err
		}
		s.changesStmt = stmt
	}
	return s.changesStmt, nil
}

// Usage is a memory's use statistics, as RecordUse left them.
type Usage struct {
	Key    string // memory.Key
	ID     string
	Uses   int64
	Demand float64
	At     *time.Time // DemandAt, in UTC as a row reads back
}

// RecordUse adds one use to each memory an id names in scope, at time now, in
// one transaction: uses+1 and the demand, decayed to now, +1, each saturating
// (memory.Use). It reads each row's counters once, inside the transaction,
// and returns what it wrote, in order, with the change-log sequence numbers
// the write took, first to last (0, 0 when it wrote nothing), so that a
// caller can apply the uses without reading the rows again. Ids that name no
// memory in scope are skipped; with strict, the first such id (or an
// ambiguous one) fails the whole write (wrapping memory.ErrNotFound, or
// memory.ErrAmbiguous) and nothing is recorded.
func (s *Store) RecordUse(ctx context.Context, scope map[string]string, ids []string, now time.Time, strict bool) (uses []Usage, first, last int64, err error) {
	if len(ids) == 0 {
		return nil, 0, 0, nil
	}
	at := time.Unix(0, now.UnixNano()).UTC()
	err = s.write(ctx, func(tx *sql.Tx) error {
		uses = uses[:0]
		for _, id := range ids {
			rows, err := tx.QueryContext(ctx, `SELECT scope, uses, demand, demand_at FROM memories WHERE id = ?`, id)
			if err != nil {
				return fmt.Errorf("read memory %s: %w", id, err)
			}
			type counters struct {
				n      int64
				demand float64
				prev   *time.Time
			}
			var scopes []string
			var cs []counters
			for rows.Next() {
				var raw string
				var n, demand, prev any
				if err := rows.Scan(&raw, &n, &demand, &prev); err != nil {
					rows.Close()
					return fmt.Errorf("read memory %s: %w", id, err)
				}
				c := counters{n: looseInt(n), demand: looseFloat(demand)}
				if prev != nil {
					t := time.Unix(0, looseInt(prev)).UTC()
					c.prev = &t
				}
				scopes, cs = append(scopes, raw), append(cs, c)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fmt.Errorf("read memory %s: %w", id, err)
			}
			s.rowsRead.Add(int64(len(scopes)))
			i, err := pick(id, scopes, scope)
			if err != nil && strict {
				return err
			}
			if i < 0 {
				if strict {
					return fmt.Errorf("memory %s: %w", id, memory.ErrNotFound)
				}
				continue // deleted meanwhile, another tenant's, or ambiguous
			}
			n, demand := memory.Use(cs[i].n, cs[i].demand, cs[i].prev, now)
			u := Usage{Key: id + "\x00" + scopes[i], ID: id, Uses: n, Demand: demand, At: &at}
			if _, err := tx.ExecContext(ctx, `UPDATE memories SET uses = ?, demand = ?, demand_at = ? WHERE id = ? AND scope = ?`,
				u.Uses, u.Demand, at.UnixNano(), id, scopes[i]); err != nil {
				return err
			}
			if last, err = logChange(ctx, tx, id, scopes[i], OpUse); err != nil {
				return err
			}
			uses = append(uses, u)
		}
		first = last - int64(len(uses)) + 1
		return nil
	})
	if err != nil || len(uses) == 0 {
		return nil, 0, 0, err
	}
	return uses, first, last, nil
}

// looseInt reads a counter column whatever its stored type (an older build
// could leave a REAL there); what is no number reads as 0.
func looseInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		switch {
		case math.IsNaN(x):
			return 0
		case x >= math.MaxInt64:
			return math.MaxInt64
		case x <= math.MinInt64:
			return math.MinInt64
		}
		return int64(x)
	}
	return 0
}

// looseFloat reads the demand column whatever its stored type.
func looseFloat(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	}
	return 0
}

// Usages reads the use statistics of the memories with the given keys that
// exist, by key: what a reader applying another process's uses needs,
// without decoding whole rows. Counters out of range read as the nearest
// valid ones.
func (s *Store) Usages(ctx context.Context, keys []string) (map[string]Usage, error) {
	out := make(map[string]Usage, len(keys))
	want := make(map[string]bool, len(keys))
	ids := make([]string, 0, len(keys))
	for _, k := range keys {
		want[k] = true
		id, _ := memory.SplitKey(k)
		ids = append(ids, id)
	}
	const chunk = 500
	for len(ids) > 0 {
		n := min(chunk, len(ids))
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		rows, err := s.db.QueryContext(ctx, `SELECT id, scope, uses, demand, demand_at FROM memories WHERE id IN (?`+
			strings.Repeat(",?", n-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("read use counts: %w", err)
		}
		for rows.Next() {
			var u Usage
			var scope string
			var uses, demand, at any
			if err := rows.Scan(&u.ID, &scope, &uses, &demand, &at); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read use counts: %w", err)
			}
			u.Key = u.ID + "\x00" + scope
			if !want[u.Key] {
				continue
			}
			u.Uses, u.Demand = memory.ClampUses(looseInt(uses)), memory.ClampDemand(looseFloat(demand))
			if at != nil {
				t := time.Unix(0, looseInt(at)).UTC()
				u.At = &t
			}
			s.rowsRead.Add(1)
			out[u.Key] = u
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read use counts: %w", err)
		}
		ids = ids[n:]
	}
	return out, nil
}

// EmbeddingUpdate sets one memory's embedding if its content is still Hash.
type EmbeddingUpdate struct {
	ID        string
	Hash      string
	Embedding *memory.Embedding // nil clears it
}

// SetEmbeddings stores embeddings in one transaction, each for the memory its
// id names in scope (nil for the whole store). An update whose memory changed
// content since (hash differs), was deleted, lies outside scope or is
// ambiguous there is skipped; it returns how many were stored.
func (s *Store) SetEmbeddings(ctx context.Context, scope map[string]string, ups []EmbeddingUpdate) (int, error) {
	n := 0
	err := s.write(ctx, func(tx *sql.Tx) error {
		n = 0
		for _, u := range ups {
			rowScope, ok, err := s.resolve(ctx, tx, u.ID, scope)
			if errors.Is(err, memory.ErrAmbiguous) || (err == nil && !ok) {
				continue
			}
			if err != nil {
				return err
			}
			var model, dim, blob any
			if u.Embedding != nil {
				model, dim, blob = u.Embedding.Model, u.Embedding.Dim, EncodeVector(u.Embedding.Vector)
			}
			res, err := tx.ExecContext(ctx, `UPDATE memories SET embed_model = ?, embed_dim = ?, embedding = ?
				WHERE id = ? AND scope = ? AND content_hash = ?`, model, dim, blob, u.ID, rowScope, u.Hash)
			if err != nil {
				return err
			}
			if k, _ := res.RowsAffected(); k > 0 {
				n++
				if _, err := logChange(ctx, tx, u.ID, rowScope, OpPut); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return n, err
}

// write runs fn in one write transaction (BEGIN IMMEDIATE, see Open).
func (s *Store) write(ctx context.Context, fn func(*sql.Tx) error) error {
	if s.readOnly {
		return fmt.Errorf("write %s: %w", s.path, ErrReadOnly)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return markFull(fmt.Errorf("begin write: %w", err))
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return markFull(err)
	}
	if err := tx.Commit(); err != nil {
		return markFull(fmt.Errorf("commit: %w", err))
	}
	return nil
}

func rowArgs(m *memory.Memory) ([]any, error) {
	tags, err := json.Marshal(nonNilSlice(m.Tags))
	if err != nil {
		return nil, err
	}
	var demandAt, model, dim, blob, occurred any
	if m.DemandAt != nil {
		demandAt = m.DemandAt.UnixNano()
	}
	if !m.OccurredAt.IsZero() {
		occurred = m.OccurredAt.UnixNano() // else NULL: it occurred when it was created
	}
	if e := m.Embedding; e != nil {
		if len(e.Vector) != e.Dim {
			return nil, fmt.Errorf("embedding has %d values but dim %d", len(e.Vector), e.Dim)
		}
		model, dim, blob = e.Model, e.Dim, EncodeVector(e.Vector)
	}
	fav := 0
	if m.Favorite {
		fav = 1
	}
	return []any{m.ID, m.Name, m.Description, m.Text, m.Type, m.Scene, memory.ScopeJSON(m.Scope), string(tags), m.Source,
		string(m.Metadata), fav, m.CreatedAt.UnixNano(), m.UpdatedAt.UnixNano(), m.Uses, m.Demand, demandAt,
		m.ContentHash, model, dim, blob, m.Episode, m.Seq, m.Speaker, occurred, m.Supersedes, memory.TextKey(m.Text)}, nil
}

// scanMemory reads one row (see decodeRow) and counts it in rowsRead.
func (s *Store) scanMemory(r scanner) (*memory.Memory, *BadRow, error) {
	m, bad, err := decodeRow(r)
	if err == nil {
		s.rowsRead.Add(1)
	}
	return m, bad, err
}

// EncodeVector writes v as little-endian float32s.
func EncodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// DecodeVector reads little-endian float32s.
func DecodeVector(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("vector blob of %d bytes is not a multiple of 4", len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

func nonNilSlice(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ModelCount is how many stored vectors a model has, and their dimension.
type ModelCount struct {
	Model string
	Dim   int
	N     int
}

// EmbeddingCounts counts the stored vectors per model and dimension.
func (s *Store) EmbeddingCounts(ctx context.Context) ([]ModelCount, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT embed_model, embed_dim, count(*) FROM memories
		WHERE embed_model IS NOT NULL GROUP BY embed_model, embed_dim`)
	if err != nil {
		return nil, fmt.Errorf("count embeddings: %w", err)
	}
	defer rows.Close()
	var out []ModelCount
	for rows.Next() {
		var c ModelCount
		if err := rows.Scan(&c.Model, &c.Dim, &c.N); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Tally counts the memories in scope (all of them for an empty scope):
// favorites, types and stored vectors per model. It reads four short columns,
// never a text or a vector.
type Tally struct {
	Memories, Favorites int
	Types               map[string]int
	Embedded            map[string]int // memories with a vector, by model
}

// Tally counts the memories in scope without decoding them.
func (s *Store) Tally(ctx context.Context, scope map[string]string) (Tally, error) {
	t := Tally{Types: map[string]int{}, Embedded: map[string]int{}}
	q := `SELECT type, favorite, coalesce(embed_model, ''), embed_dim > 0, '{}', count(*) FROM memories GROUP BY 1, 2, 3, 4`
	if len(scope) > 0 {
		q = `SELECT type, favorite, coalesce(embed_model, ''), embed_dim > 0, scope, 1 FROM memories`
	}
	rows, err := s.db.QueryContext(ctx, q)
	if err != nil {
		return t, fmt.Errorf("count memories: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			typ, model, raw string
			fav, n          int
			vec             sql.NullBool
		)
		if err := rows.Scan(&typ, &fav, &model, &vec, &raw, &n); err != nil {
			return t, fmt.Errorf("count memories: %w", err)
		}
		if len(scope) > 0 {
			if sc, err := parseScope(raw); err != nil || !memory.Inside(sc, scope) {
				continue // outside, or a bad row (doctor and the index report those)
			}
		}
		t.Memories += n
		t.Types[typ] += n
		if fav != 0 {
			t.Favorites += n
		}
		if model != "" && vec.Bool {
			t.Embedded[model] += n
		}
	}
	return t, rows.Err()
}

// LatestModel is the model of the most recently inserted memory that has a
// vector ("" when none has): one row read from the end of the table, so
// that opening a store can learn its model without counting every row.
func (s *Store) LatestModel(ctx context.Context) (string, error) {
	var model string
	err := s.db.QueryRowContext(ctx, `SELECT embed_model FROM memories
		WHERE embed_model IS NOT NULL ORDER BY rowid DESC LIMIT 1`).Scan(&model)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("latest model: %w", err)
	}
	return model, nil
}
