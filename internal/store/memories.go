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

// Change is one entry of the change log: memory id was written, deleted or
// used, or (OpSetting) the setting named by ID changed.
type Change struct {
	Seq int64
	ID  string
	Op  string
}

const memoryColumns = `id, name, description, text, type, scene, scope, tags, source, metadata, favorite,
	created_at, updated_at, uses, demand, demand_at, content_hash, embed_model, embed_dim, embedding`

// Put inserts or replaces memories in one transaction: either all are stored
// or none. Each memory must already be normalised and carry an id and times.
// With a scope (a tenant's), a memory may replace only one inside it: an id
// held outside is refused as taken, inside the same transaction, and nothing
// is stored. It returns the change-log sequence numbers the write took, first
// to last: one per memory, contiguous, since the transaction holds the write
// lock.
func (s *Store) Put(ctx context.Context, scope map[string]string, mems []*memory.Memory) (first, last int64, err error) {
	if len(mems) == 0 {
		return 0, 0, nil
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		first, last, err = s.put(ctx, tx, scope, mems)
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	return first, last, nil
}

// PutMerging is Put for memories that may repeat one already stored: each
// memory i with mergeable[i] whose content hash and scope equal a stored
// memory's is not stored, and existing[i] names that memory. The check and
// the write are one transaction, so two processes adding the same memory at
// once store it once. The change-log range covers what was stored (0, 0 for
// nothing).
func (s *Store) PutMerging(ctx context.Context, scope map[string]string, mems []*memory.Memory, mergeable []bool) (existing []string, first, last int64, err error) {
	err = s.write(ctx, func(tx *sql.Tx) error {
		existing = make([]string, len(mems))
		var rest []*memory.Memory
		for i, m := range mems {
			if i < len(mergeable) && mergeable[i] {
				id, err := s.sameContent(ctx, tx, m)
				if err != nil {
					return err
				}
				if id != "" {
					existing[i] = id
					continue
				}
			}
			rest = append(rest, m)
		}
		first, last = 0, 0
		if len(rest) == 0 {
			return nil
		}
		first, last, err = s.put(ctx, tx, scope, rest)
		return err
	})
	if err != nil {
		return nil, 0, 0, err
	}
	return existing, first, last, nil
}

// sameContent returns the id of a stored memory with m's content hash and
// exactly m's scope, or "" (the oldest id when there are several).
func (s *Store) sameContent(ctx context.Context, tx *sql.Tx, m *memory.Memory) (string, error) {
	want, err := json.Marshal(nonNilMap(m.Scope)) // as rowArgs stores it: keys sorted
	if err != nil {
		return "", err
	}
	rows, err := tx.QueryContext(ctx, `SELECT id FROM memories WHERE content_hash = ? AND scope = ? ORDER BY id LIMIT 1`,
		m.ContentHash, string(want))
	if err != nil {
		return "", fmt.Errorf("look for a duplicate of memory %s: %w", m.ID, err)
	}
	defer rows.Close()
	id := ""
	if rows.Next() {
		if err := rows.Scan(&id); err != nil {
			return "", err
		}
		s.rowsRead.Add(1)
	}
	return id, rows.Err()
}

// put is Put inside the caller's write transaction.
func (s *Store) put(ctx context.Context, tx *sql.Tx, scope map[string]string, mems []*memory.Memory) (first, last int64, err error) {
	if len(scope) > 0 {
		for _, m := range mems {
			in, found, err := s.rowInScope(ctx, tx, m.ID, scope)
			if err != nil {
				return 0, 0, err
			}
			if found && !in {
				return 0, 0, fmt.Errorf("%w: id %q is taken", memory.ErrInvalid, m.ID)
			}
		}
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO memories (`+memoryColumns+`)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`)
	if err != nil {
		return 0, 0, err
	}
	defer stmt.Close()
	log, err := tx.PrepareContext(ctx, `INSERT INTO changes (id, op) VALUES (?, ?)`)
	if err != nil {
		return 0, 0, err
	}
	defer log.Close()
	for _, m := range mems {
		args, err := rowArgs(m)
		if err != nil {
			return 0, 0, fmt.Errorf("memory %s: %w", m.ID, err)
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return 0, 0, fmt.Errorf("store memory %s: %w", m.ID, err)
		}
		res, err := log.ExecContext(ctx, m.ID, OpPut)
		if err != nil {
			return 0, 0, err
		}
		if last, err = res.LastInsertId(); err != nil {
			return 0, 0, err
		}
	}
	return last - int64(len(mems)) + 1, last, nil
}

// GetMany returns the memories with the given ids that exist, by id.
func (s *Store) GetMany(ctx context.Context, ids []string) (map[string]*memory.Memory, error) {
	out := make(map[string]*memory.Memory, len(ids))
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
			return nil, fmt.Errorf("read memories: %w", err)
		}
		for rows.Next() {
			m, err := s.scanMemory(rows)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("read memories: %w", err)
			}
			out[m.ID] = m
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read memories: %w", err)
		}
		ids = ids[n:]
	}
	return out, nil
}

// Delete removes, in one transaction, the memories with the given ids that
// exist (inside scope, when one is given) and returns their ids with the
// change-log sequence numbers the write took, first to last (0, 0 when
// nothing was deleted).
func (s *Store) Delete(ctx context.Context, scope map[string]string, ids []string) (deleted []string, first, last int64, err error) {
	err = s.write(ctx, func(tx *sql.Tx) error {
		deleted = deleted[:0]
		for _, id := range ids {
			if len(scope) > 0 {
				in, _, err := s.rowInScope(ctx, tx, id, scope)
				if err != nil {
					return err
				}
				if !in {
					continue
				}
			}
			res, err := tx.ExecContext(ctx, `DELETE FROM memories WHERE id = ?`, id)
			if err != nil {
				return err
			}
			if k, _ := res.RowsAffected(); k > 0 {
				log, err := tx.ExecContext(ctx, `INSERT INTO changes (id, op) VALUES (?, ?)`, id, OpDelete)
				if err != nil {
					return err
				}
				if last, err = log.LastInsertId(); err != nil {
					return err
				}
				deleted = append(deleted, id)
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

// rowInScope reads the scope of the row with id inside tx: found says whether
// it exists, in whether it carries every key=value of scope.
func (s *Store) rowInScope(ctx context.Context, tx *sql.Tx, id string, scope map[string]string) (in, found bool, err error) {
	var raw string
	err = tx.QueryRowContext(ctx, `SELECT scope FROM memories WHERE id = ?`, id).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return false, false, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("read memory %s: %w", id, err)
	}
	s.rowsRead.Add(1)
	in, err = scopeHolds(raw, scope)
	if err != nil {
		return false, true, fmt.Errorf("memory %s: %w", id, err)
	}
	return in, true, nil
}

// scopeHolds reports whether a row's scope column (a JSON object) carries
// every key=value of scope.
func scopeHolds(raw string, scope map[string]string) (bool, error) {
	if len(scope) == 0 {
		return true, nil
	}
	var have map[string]string
	if err := json.Unmarshal([]byte(raw), &have); err != nil {
		return false, fmt.Errorf("scope: %w", err)
	}
	for k, v := range scope {
		if have[k] != v {
			return false, nil
		}
	}
	return true, nil
}

// Get returns one memory, or an error wrapping memory.ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (*memory.Memory, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+memoryColumns+` FROM memories WHERE id = ?`, id)
	m, err := s.scanMemory(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("memory %s: %w", id, memory.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read memory %s: %w", id, err)
	}
	return m, nil
}

// Scan calls fn for every memory in id order. It stops at fn's first error.
func (s *Store) Scan(ctx context.Context, fn func(*memory.Memory) error) error {
	rows, err := s.db.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories ORDER BY id`)
	if err != nil {
		return fmt.Errorf("scan memories: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		m, err := s.scanMemory(rows)
		if err != nil {
			return fmt.Errorf("scan memories: %w", err)
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Count returns the number of memories.
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
	rows, err := s.db.QueryContext(ctx, `SELECT seq, id, op FROM changes WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("read change log: %w", err)
	}
	defer rows.Close()
	var out []Change
	for rows.Next() {
		var c Change
		if err := rows.Scan(&c.Seq, &c.ID, &c.Op); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Usage is a memory's use statistics, as RecordUse left them.
type Usage struct {
	ID     string
	Uses   int64
	Demand float64
	At     *time.Time // DemandAt, in UTC as a row reads back
}

// RecordUse adds one use to each memory at time now, in one transaction:
// uses+1 and the demand, decayed to now, +1. It reads each row's counters
// once, inside the transaction, and returns what it wrote, in order, with the
// change-log sequence numbers the write took, first to last (0, 0 when it
// wrote nothing), so that a caller can apply the uses without reading the rows
// again. Ids that do not exist or lie outside scope (when one is given) are
// skipped; with strict, the first such id fails the whole write (wrapping
// memory.ErrNotFound) and nothing is recorded.
func (s *Store) RecordUse(ctx context.Context, scope map[string]string, ids []string, now time.Time, strict bool) (uses []Usage, first, last int64, err error) {
	if len(ids) == 0 {
		return nil, 0, 0, nil
	}
	at := time.Unix(0, now.UnixNano()).UTC()
	err = s.write(ctx, func(tx *sql.Tx) error {
		uses = uses[:0]
		for _, id := range ids {
			var (
				n      int64
				demand float64
				prev   sql.NullInt64
				raw    string
			)
			err := tx.QueryRowContext(ctx, `SELECT uses, demand, demand_at, scope FROM memories WHERE id = ?`, id).Scan(&n, &demand, &prev, &raw)
			in := err == nil
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("read memory %s: %w", id, err)
			}
			if in {
				s.rowsRead.Add(1)
				if in, err = scopeHolds(raw, scope); err != nil {
					return fmt.Errorf("memory %s: %w", id, err)
				}
			}
			if !in {
				if strict {
					return fmt.Errorf("memory %s: %w", id, memory.ErrNotFound)
				}
				continue // deleted meanwhile, or another tenant's
			}
			if prev.Valid {
				demand = memory.Decay(demand, now.Sub(time.Unix(0, prev.Int64)))
			}
			u := Usage{ID: id, Uses: n + 1, Demand: demand + 1, At: &at}
			if _, err := tx.ExecContext(ctx, `UPDATE memories SET uses = ?, demand = ?, demand_at = ? WHERE id = ?`,
				u.Uses, u.Demand, at.UnixNano(), id); err != nil {
				return err
			}
			log, err := tx.ExecContext(ctx, `INSERT INTO changes (id, op) VALUES (?, ?)`, id, OpUse)
			if err != nil {
				return err
			}
			if last, err = log.LastInsertId(); err != nil {
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

// Usages reads the use statistics of the memories with the given ids that
// exist, by id: what a reader applying another process's uses needs, without
// decoding whole rows.
func (s *Store) Usages(ctx context.Context, ids []string) (map[string]Usage, error) {
	out := make(map[string]Usage, len(ids))
	const chunk = 500
	for len(ids) > 0 {
		n := min(chunk, len(ids))
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		rows, err := s.db.QueryContext(ctx, `SELECT id, uses, demand, demand_at FROM memories WHERE id IN (?`+
			strings.Repeat(",?", n-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("read use counts: %w", err)
		}
		for rows.Next() {
			var u Usage
			var at sql.NullInt64
			if err := rows.Scan(&u.ID, &u.Uses, &u.Demand, &at); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read use counts: %w", err)
			}
			if at.Valid {
				t := time.Unix(0, at.Int64).UTC()
				u.At = &t
			}
			s.rowsRead.Add(1)
			out[u.ID] = u
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

// SetEmbeddings stores embeddings in one transaction. An update whose memory
// changed content since (hash differs), was deleted or lies outside scope (when
// one is given) is skipped; it returns how many were stored.
func (s *Store) SetEmbeddings(ctx context.Context, scope map[string]string, ups []EmbeddingUpdate) (int, error) {
	n := 0
	err := s.write(ctx, func(tx *sql.Tx) error {
		n = 0
		for _, u := range ups {
			if len(scope) > 0 {
				in, _, err := s.rowInScope(ctx, tx, u.ID, scope)
				if err != nil {
					return err
				}
				if !in {
					continue
				}
			}
			var model, dim, blob any
			if u.Embedding != nil {
				model, dim, blob = u.Embedding.Model, u.Embedding.Dim, EncodeVector(u.Embedding.Vector)
			}
			res, err := tx.ExecContext(ctx, `UPDATE memories SET embed_model = ?, embed_dim = ?, embedding = ?
				WHERE id = ? AND content_hash = ?`, model, dim, blob, u.ID, u.Hash)
			if err != nil {
				return err
			}
			if k, _ := res.RowsAffected(); k > 0 {
				n++
				if _, err := tx.ExecContext(ctx, `INSERT INTO changes (id, op) VALUES (?, ?)`, u.ID, OpPut); err != nil {
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
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin write: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

func rowArgs(m *memory.Memory) ([]any, error) {
	scope, err := json.Marshal(nonNilMap(m.Scope))
	if err != nil {
		return nil, err
	}
	tags, err := json.Marshal(nonNilSlice(m.Tags))
	if err != nil {
		return nil, err
	}
	var demandAt, model, dim, blob any
	if m.DemandAt != nil {
		demandAt = m.DemandAt.UnixNano()
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
	return []any{m.ID, m.Name, m.Description, m.Text, m.Type, m.Scene, string(scope), string(tags), m.Source,
		string(m.Metadata), fav, m.CreatedAt.UnixNano(), m.UpdatedAt.UnixNano(), m.Uses, m.Demand, demandAt,
		m.ContentHash, model, dim, blob}, nil
}

type scanner interface{ Scan(dest ...any) error }

// scanMemory reads one whole row and counts it in rowsRead.
func (s *Store) scanMemory(r scanner) (*memory.Memory, error) {
	m, err := scanMemory(r)
	if err == nil {
		s.rowsRead.Add(1)
	}
	return m, err
}

func scanMemory(r scanner) (*memory.Memory, error) {
	var (
		m                     memory.Memory
		scope, tags, metadata string
		fav                   int
		created, updated      int64
		demandAt              sql.NullInt64
		model                 sql.NullString
		dim                   sql.NullInt64
		blob                  []byte
	)
	if err := r.Scan(&m.ID, &m.Name, &m.Description, &m.Text, &m.Type, &m.Scene, &scope, &tags, &m.Source,
		&metadata, &fav, &created, &updated, &m.Uses, &m.Demand, &demandAt, &m.ContentHash, &model, &dim, &blob); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(scope), &m.Scope); err != nil {
		return nil, fmt.Errorf("memory %s: scope: %w", m.ID, err)
	}
	if len(m.Scope) == 0 {
		m.Scope = nil
	}
	if err := json.Unmarshal([]byte(tags), &m.Tags); err != nil {
		return nil, fmt.Errorf("memory %s: tags: %w", m.ID, err)
	}
	if len(m.Tags) == 0 {
		m.Tags = nil
	}
	if strings.TrimSpace(metadata) != "" {
		m.Metadata = json.RawMessage(metadata)
	}
	m.Favorite = fav != 0
	m.CreatedAt = time.Unix(0, created).UTC()
	m.UpdatedAt = time.Unix(0, updated).UTC()
	if demandAt.Valid {
		t := time.Unix(0, demandAt.Int64).UTC()
		m.DemandAt = &t
	}
	if model.Valid && blob != nil {
		v, err := DecodeVector(blob)
		if err != nil {
			return nil, fmt.Errorf("memory %s: embedding: %w", m.ID, err)
		}
		if int(dim.Int64) != len(v) {
			return nil, fmt.Errorf("memory %s: embedding has %d values but dim %d", m.ID, len(v), dim.Int64)
		}
		m.Embedding = &memory.Embedding{Model: model.String, Dim: len(v), Vector: v}
	}
	return &m, nil
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

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
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
		if in, err := scopeHolds(raw, scope); err != nil || !in {
			if err != nil {
				return t, fmt.Errorf("count memories: %w", err)
			}
			continue
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
