package weaviate

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/weaviatetest"
	"github.com/engram-memory/engram/memory"
)

func TestMain(m *testing.M) { os.Exit(weaviatetest.Main(m)) }

// openTest opens a Store on the shared test server in a class of its own,
// dropped when the test ends. edit may change the config first.
func openTest(t testing.TB, edit func(*Config)) *Store {
	t.Helper()
	base := weaviatetest.URL(t)
	cfg := Config{Endpoint: base, GRPCPort: weaviatetest.GRPCPort(t, base), Class: weaviatetest.Class(t, base)}
	if edit != nil {
		edit(&cfg)
	}
	s, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// put stores mems or fails the test.
func put(t testing.TB, s *Store, mems ...*memory.Memory) {
	t.Helper()
	if err := s.Put(context.Background(), mems); err != nil {
		t.Fatalf("put: %v", err)
	}
}

var t0 = time.Date(2026, 11, 30, 8, 0, 0, 123456789, time.UTC)

// mem is a normalised memory as the root package stores it: times set (it
// occurred when it was created unless edit says otherwise), content hash
// computed.
func mem(id, text string, edit func(*memory.Memory)) *memory.Memory {
	m := &memory.Memory{ID: id, Text: text, Type: memory.DefaultType, CreatedAt: t0, UpdatedAt: t0}
	if edit != nil {
		edit(m)
	}
	if m.OccurredAt.IsZero() {
		m.OccurredAt = m.CreatedAt
	}
	if err := m.Normalize(); err != nil {
		panic(err)
	}
	m.ContentHash = m.ComputeHash()
	return m
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
