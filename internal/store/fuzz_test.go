package store

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/engram-memory/engram/memory"
)

// FuzzDecodeRow stores rows with arbitrary column values, as a damaging tool
// would write them, and reads them back through every path: Scan, Get,
// GetKeys, RecordUse and Update never fail on the row or panic; a row is
// either skipped and reported, or read as a memory that is valid as it
// stands (it would import back), with any damaged part reported.
func FuzzDecodeRow(f *testing.F) {
	ctx := context.Background()
	s, _ := openTemp(f)
	f.Add("a", "text", `{"team":"t"}`, `["x"]`, `{"k":1}`, int64(1), float64(0), 1.5, int64(1e18), []byte{0, 0, 128, 63}, int64(1), false, "", int64(0), "a", int64(0))
	f.Add("b", "", `{"team":`, `{"a":1}`, `not json`, int64(math.MinInt64), math.Inf(1), math.NaN(), int64(math.MaxInt64), []byte{1, 2}, int64(7), true, " e ", int64(-3), "\x00", int64(math.MaxInt64))
	f.Add("c c", "t", `{}`, `[]`, ``, int64(0), 9.3e18, -5.0, int64(0), []byte{}, int64(0), true, "chat", int64(3), "Caroline", int64(1e18))
	f.Add("d", "t", `{"b":"1","a":"2"}`, `[1]`, `[]`, int64(-1), -1.0, 1e308, int64(-1), []byte{0, 0, 0xc0, 0x7f}, int64(1), false, "", int64(5), " user ", int64(-1))
	f.Add("e", "t", `{"a=b":"c"}`, `null`, `{}`, int64(1), 0.5, 0.0, int64(3), []byte(nil), int64(0), true, "e\n", int64(1<<60), "", int64(0))
	f.Fuzz(func(t *testing.T, id, text, scope, tags, metadata string, created int64, uses, demand float64, demandAt int64, blob []byte, dim int64, realUses bool,
		episode string, seq int64, speaker string, occurred int64) {
		var usesArg any = int64(uses)
		if realUses || math.IsNaN(uses) || math.IsInf(uses, 0) {
			usesArg = uses
		}
		var model any
		if blob != nil {
			model = "m"
		}
		var occurredArg any = occurred
		if occurred == 0 {
			occurredArg = nil // a row migrated from schema 2 before its occurred_at was filled
		}
		_, err := s.db.Exec(`INSERT OR REPLACE INTO memories (`+memoryColumns+`) VALUES `+rowPlaceholders,
			id, "", "", text, "note", "", scope, tags, "", metadata, 0, created, created, usesArg, demand, demandAt, "h", model, dim, blob,
			episode, seq, speaker, occurredArg, id)
		if err != nil {
			t.Skip() // the column constraints refuse it: SQLite never holds it
		}
		defer s.db.Exec(`DELETE FROM memories`)
		var seen []*memory.Memory
		bad := 0
		err = s.Scan(ctx, func(m *memory.Memory) error { seen = append(seen, m); return nil }, func(b BadRow) {
			bad++
			if b.Problem == "" {
				t.Fatalf("a bad row without a problem: %+v", b)
			}
		})
		if err != nil {
			t.Fatalf("Scan failed on a row: %v", err)
		}
		if len(seen)+bad == 0 || len(seen) > 1 {
			t.Fatalf("Scan of one row: %d memories, %d bad", len(seen), bad)
		}
		for _, m := range seen {
			c := *m
			if err := c.Normalize(); err != nil {
				t.Fatalf("a read memory is not valid: %v (%+v)", err, m)
			}
			if err := m.CheckStored(); err != nil {
				t.Fatalf("a read memory is not valid: %v (%+v)", err, m)
			}
			if err := memory.CheckID(m.ID); err != nil {
				t.Fatalf("a read memory has a bad id: %v", err)
			}
			if got, _, err := s.GetKeys(ctx, []string{m.Key()}); err != nil || got[m.Key()] == nil {
				t.Fatalf("GetKeys of a read memory: %v, %v", got, err)
			}
			if got, err := s.Get(ctx, m.Scope, []string{m.ID}); err != nil || got[m.ID] == nil {
				t.Fatalf("Get of a read memory: %v, %v", got, err)
			}
			uses, _, _, err := s.RecordUse(ctx, m.Scope, []string{m.ID}, time.Unix(1e9, 0), true)
			if err != nil || len(uses) != 1 || uses[0].Uses < 1 || uses[0].Uses > memory.MaxUses || !(uses[0].Demand >= 1) {
				t.Fatalf("RecordUse of a read memory: %+v, %v", uses, err)
			}
			if _, err := s.Update(ctx, m.Scope, m.ID, func(x *memory.Memory) (*memory.Memory, error) { x.Favorite = true; return x, nil }); err != nil {
				t.Fatalf("Update of a read memory: %v", err)
			}
		}
		if bad > 0 && len(seen) == 0 {
			if _, err := s.Update(ctx, nil, id, func(x *memory.Memory) (*memory.Memory, error) { return x, nil }); err == nil {
				t.Fatal("Update of a skipped row succeeded")
			} else if !errors.Is(err, memory.ErrNotFound) && !errors.Is(err, memory.ErrInvalid) {
				t.Fatalf("Update of a skipped row: %v", err)
			}
		}
	})
}
