package store

import (
	"context"
	"testing"

	"github.com/engram-memory/engram/memory"
)

// TestChangesPrepared: the prepared change-log read returns what it returned
// ad hoc, on every connection and after many calls, and survives concurrent use.
func TestChangesPrepared(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	for _, id := range []string{"a", "b", "c"} {
		if _, _, err := s.Put(ctx, nil, []*memory.Memory{testMemory(id)}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.Changes(ctx, 0, 100)
	if err != nil || len(all) != 3 {
		t.Fatalf("changes %v, %v", all, err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for i := range 50 {
				got, err := s.Changes(ctx, all[0].Seq, 1+i%2)
				if err == nil && (len(got) != 1+i%2 || got[0] != all[1]) {
					t.Errorf("changes after %d: %v", all[0].Seq, got)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkChanges is the catch-up every search runs, with nothing new: the
// prepared statement against the same query parsed each time.
func BenchmarkChanges(b *testing.B) {
	ctx := context.Background()
	s, _ := openTemp(b)
	if _, _, err := s.Put(ctx, nil, []*memory.Memory{testMemory("a")}); err != nil {
		b.Fatal(err)
	}
	last, _ := s.LastSeq(ctx)
	b.Run("prepared", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Changes(ctx, last, 512); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("adhoc", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rows, err := s.db.QueryContext(ctx, `SELECT seq, id, scope, op FROM changes WHERE seq > ? ORDER BY seq LIMIT ?`, last, 512)
			if err != nil {
				b.Fatal(err)
			}
			for rows.Next() {
			}
			rows.Close()
		}
	})
}
