package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/eval"
	"github.com/engram-memory/engram/memory"
)

// evalStore adapts an engram store in a temporary file to eval.Store. Searches
// never record uses, so one query cannot boost the next.
type evalStore struct {
	db  *engram.DB
	dir string // removed on Close

	onDeferred func(reason string)
	mu         sync.Mutex
	deferred   string // the first reason an Add stored memories without vectors
}

var _ eval.Store = (*evalStore)(nil)

// evalOpener returns an eval.Opener that creates each fresh store as a new
// file under a new directory inside root ("" means the system temp directory).
// onDeferred, if set, hears once per store when the embedder failed on Add.
func evalOpener(opts engram.Options, root string, onDeferred func(reason string)) eval.Opener {
	opts.NoSnapshot = true // a throwaway store: a snapshot would only cost time
	return func(ctx context.Context) (eval.Store, error) {
		dir, err := os.MkdirTemp(root, "engram-eval-")
		if err != nil {
			return nil, fmt.Errorf("temporary store directory: %w", err)
		}
		db, err := engram.Open(ctx, filepath.Join(dir, "eval.db"), opts)
		if err != nil {
			return nil, errors.Join(err, os.RemoveAll(dir))
		}
		return &evalStore{db: db, dir: dir, onDeferred: onDeferred}, nil
	}
}

// Add stores one batch in one transaction.
func (s *evalStore) Add(ctx context.Context, mems []*memory.Memory) error {
	res, err := s.db.Add(ctx, mems...)
	if err != nil {
		return err
	}
	if res.Deferred != "" {
		s.mu.Lock()
		first := s.deferred == ""
		if first {
			s.deferred = res.Deferred
		}
		s.mu.Unlock()
		if first && s.onDeferred != nil {
			s.onDeferred(res.Deferred)
		}
	}
	return nil
}

// Search runs one query without recording a use.
func (s *evalStore) Search(ctx context.Context, q memory.Query) (*memory.Response, error) {
	q.NoRecord = true
	return s.db.Search(ctx, q)
}

// Close closes the store and removes its file.
func (s *evalStore) Close() error {
	err := s.db.Close()
	if rerr := os.RemoveAll(s.dir); rerr != nil {
		err = errors.Join(err, fmt.Errorf("remove temporary store: %w", rerr))
	}
	return err
}
