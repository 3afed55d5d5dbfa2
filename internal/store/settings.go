package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Setting returns a store-level setting (for example a calibrated leg
// weight), as every process last wrote it. A search reads one each time, so
// a value read at the file's current Version is answered from memory.
func (s *Store) Setting(ctx context.Context, key string) (string, bool, error) {
	s.verMu.Lock()
	defer s.verMu.Unlock()
	at, verr := s.versionLocked(ctx)
	if c, hit := s.settings[key]; verr == nil && hit && c.at == at {
		return c.value, c.ok, nil
	}
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	ok := err == nil
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read setting %s: %w", key, err)
	}
	if verr == nil { // read after at: any later commit changes the Version
		if s.settings == nil {
			s.settings = map[string]cachedSetting{}
		}
		s.settings[key] = cachedSetting{at: at, value: v, ok: ok}
	}
	return v, ok, nil
}

// SetSetting stores a setting, or deletes it when value is empty, and logs
// the change so that other processes reload their settings.
func (s *Store) SetSetting(ctx context.Context, key, value string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		var err error
		if value == "" {
			_, err = tx.ExecContext(ctx, `DELETE FROM settings WHERE key = ?`, key)
		} else {
			_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)`, key, value)
		}
		if err != nil {
			return fmt.Errorf("write setting %s: %w", key, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO changes (id, op) VALUES (?, ?)`, key, OpSetting); err != nil {
			return fmt.Errorf("write setting %s: %w", key, err)
		}
		return nil
	})
}

// GetEmbedding looks a vector up in the embedding cache (embed.Cache).
func (s *Store) GetEmbedding(ctx context.Context, model, hash string) ([]float32, bool, error) {
	var blob []byte
	err := s.db.QueryRowContext(ctx, `SELECT vec FROM embed_cache WHERE model = ? AND hash = ?`, model, hash).Scan(&blob)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read embedding cache: %w", err)
	}
	v, err := DecodeVector(blob)
	if err != nil {
		return nil, false, fmt.Errorf("read embedding cache: %w", err)
	}
	return v, true, nil
}

// PutEmbedding stores a vector in the embedding cache (embed.Cache).
func (s *Store) PutEmbedding(ctx context.Context, model, hash string, v []float32) error {
	return s.PutEmbeddings(ctx, model, []string{hash}, [][]float32{v})
}

// PutEmbeddings stores vectors in the embedding cache in one transaction
// (embed.BatchCache).
func (s *Store) PutEmbeddings(ctx context.Context, model string, hashes []string, vecs [][]float32) error {
	if len(hashes) != len(vecs) {
		return fmt.Errorf("write embedding cache: %d hashes for %d vectors", len(hashes), len(vecs))
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		for i, h := range hashes {
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO embed_cache (model, hash, vec) VALUES (?, ?, ?)`,
				model, h, EncodeVector(vecs[i])); err != nil {
				return fmt.Errorf("write embedding cache: %w", err)
			}
		}
		return nil
	})
}
