package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/backend/weaviate"
	"github.com/engram-memory/engram/internal/eval"
	"github.com/engram-memory/engram/memory"
)

// evalStore adapts an engram store in a temporary file to eval.Store. Searches
// never record uses, so one query cannot boost the next.
type evalStore struct {
	db   *engram.DB
	dir  string          // removed on Close
	drop *weaviate.Store // a Weaviate class of its own, dropped on Close

	onDeferred func(reason string)
	mu         sync.Mutex
	deferred   string // the first reason an Add stored memories without vectors
}

var _ eval.Store = (*evalStore)(nil)

// evalOpener returns an eval.Opener that creates each fresh store as a new
// file under a new directory inside root ("" means the system temp directory).
// onDeferred, if set, hears once per store when the embedder failed on Add.
//
// With a weaviate:// URL as db, each fresh store is instead a new class on
// that server, named after the URL's class with a random suffix, and dropped
// on Close.
func evalOpener(opts engram.Options, root, db string, onDeferred func(reason string)) (eval.Opener, error) {
	opts.SQLite.NoSnapshot = true // a throwaway store: a snapshot would only cost time
	if weaviate.IsURL(db) {
		cfg, err := weaviate.ParseURL(db)
		if err != nil {
			return nil, usagef("eval: --db: %v", err)
		}
		base := cfg.Class
		return func(ctx context.Context) (eval.Store, error) {
			var rnd [4]byte
			rand.Read(rnd[:])
			c := cfg
			c.Class = base + "_eval_" + hex.EncodeToString(rnd[:])
			be, err := weaviate.OpenBackend(ctx, c)
			if err != nil {
				return nil, err
			}
			db, err := engram.OpenBackend(ctx, be, opts)
			if err != nil {
				return nil, errors.Join(err, be.Store().Drop(ctx), be.Close())
			}
			return &evalStore{db: db, drop: be.Store(), onDeferred: onDeferred}, nil
		}, nil
	}
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
	}, nil
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
	return s.db.Search(asQuery(ctx), q)
}

// Close closes the store and removes its file (or drops its class).
func (s *evalStore) Close() error {
	var err error
	if s.drop != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if derr := s.drop.Drop(ctx); derr != nil {
			err = fmt.Errorf("drop the eval class: %w", derr)
		}
	}
	err = errors.Join(err, s.db.Close())
	if s.dir == "" {
		return err
	}
	if rerr := os.RemoveAll(s.dir); rerr != nil {
		err = errors.Join(err, fmt.Errorf("remove temporary store: %w", rerr))
	}
	return err
}
