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
// It returns the change-log sequence numbers the write took, first to last:
// one per memory, contiguous, since the transaction holds the write lock.
func (s *Store) Put(ctx context.Context, mems []*memory.Memory) (first, last int64, err error) {
	if len(mems) == 0 {
		return 0, 0, nil
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO memories (`+memoryColumns+`)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		log, err := tx.PrepareContext(ctx, `INSERT INTO changes (id, op) VALUES (?, ?)`)
		if err != nil {
			return err
		}
		defer log.Close()
		for _, m := range mems {
			args, err := rowArgs(m)
			if err != nil {
				return fmt.Errorf("memory %s: %w", m.ID, err)
			}
			if _, err := stmt.ExecContext(ctx, args...); err != nil {
				return fmt.Errorf("store memory %s: %w", m.ID, err)
			}
			res, err := log.ExecContext(ctx, m.ID, OpPut)
			if err != nil {
				return err
			}
			if last, err = res.LastInsertId(); err != nil {
				return err
			}
		}
		first = last - int64(len(mems)) + 1
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	return first, last, nil
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
			m, err := scanMemory(rows)
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

// Delete removes the memories with the given ids and returns how many existed.
func (s *Store) Delete(ctx context.Context, ids []string) (int, error) {
	n := 0
	err := s.write(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			res, err := tx.ExecContext(ctx, `DELETE FROM memories WHERE id = ?`, id)
			if err != nil {
				return err
			}
			if k, _ := res.RowsAffected(); k > 0 {
				n += int(k)
				if _, err := tx.ExecContext(ctx, `INSERT INTO changes (id, op) VALUES (?, ?)`, id, OpDelete); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return n, err
}

// Get returns one memory, or an error wrapping memory.ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (*memory.Memory, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+memoryColumns+` FROM memories WHERE id = ?`, id)
	m, err := scanMemory(row)
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
		m, err := scanMemory(rows)
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

// RecordUse adds one use to each memory at time now: uses+1 and the demand,
// decayed to now, +1.
func (s *Store) RecordUse(ctx context.Context, ids []string, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			var demand float64
			var at sql.NullInt64
			err := tx.QueryRowContext(ctx, `SELECT demand, demand_at FROM memories WHERE id = ?`, id).Scan(&demand, &at)
			if errors.Is(err, sql.ErrNoRows) {
				continue // deleted meanwhile
			}
			if err != nil {
				return err
			}
			if at.Valid {
				demand = memory.Decay(demand, now.Sub(time.Unix(0, at.Int64)))
			}
			if _, err := tx.ExecContext(ctx, `UPDATE memories SET uses = uses + 1, demand = ?, demand_at = ? WHERE id = ?`,
				demand+1, now.UnixNano(), id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO changes (id, op) VALUES (?, ?)`, id, OpUse); err != nil {
				return err
			}
		}
		return nil
	})
}

// EmbeddingUpdate sets one memory's embedding if its content is still Hash.
type EmbeddingUpdate struct {
	ID        string
	Hash      string
	Embedding *memory.Embedding // nil clears it
}

// SetEmbeddings stores embeddings. An update whose memory changed content since
// (hash differs) or was deleted is skipped; it returns how many were stored.
func (s *Store) SetEmbeddings(ctx context.Context, ups []EmbeddingUpdate) (int, error) {
	n := 0
	err := s.write(ctx, func(tx *sql.Tx) error {
		for _, u := range ups {
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
