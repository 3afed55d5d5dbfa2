package weaviate

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/memory"
)

// full is a memory with every field set, and values chosen to catch lossy
// encodings: nanosecond times, a count beyond 2^32, float32 edge values, a
// metadata object whose spacing and key order must survive byte for byte.
func full(id string) *memory.Memory {
	demandAt := time.Date(2026, 12, 1, 23, 59, 59, 999999999, time.UTC)
	return mem(id, "The deploy key lives in tasks_claim — ünïcödé, 日本語, emoji 🧠.\nSecond line.", func(m *memory.Memory) {
		m.Name = "Deploy key"
		m.Description = "where the deploy key is"
		m.Type = "fact"
		m.Scene = "ops review"
		m.Scope = map[string]string{"team": "t1", "user": "u=7 (ü)", "project": "Engram/Weaviate"}
		m.Tags = []string{"ops", "keys", "日本"}
		m.Source = "slack:#ops"
		m.Metadata = json.RawMessage(`{"b": [1, 2.50, "x"],  "a": {"nested": null}, "u": "\u00fc"}`)
		m.Favorite = true
		m.CreatedAt = time.Date(1999, 12, 31, 23, 59, 59, 1, time.UTC)
		m.UpdatedAt = t0.Add(time.Nanosecond)
		m.Uses = 1 << 40
		m.Demand = 3.141592653589793
		m.DemandAt = &demandAt
		m.Episode = "release chat 7 ⟩ ünï"
		m.Seq = memory.MaxSeq
		m.Speaker = "Caroline (ü)"
		m.OccurredAt = time.Date(2023, 5, 8, 13, 56, 0, 999999999, time.UTC)
		m.Supersedes = "01OLD"
		m.Embedding = &memory.Embedding{Model: "glove100-mean-v1", Dim: 8,
			Vector: []float32{0.1, -0.25, 1e-45, 3.4028235e38, -1.1754944e-38, 0.33333334, -7, 1.0000001}}
	})
}

func TestRoundTrip(t *testing.T) {
	for _, tok := range []string{TokenizerEngram, TokenizerWord} {
		t.Run(tok, func(t *testing.T) {
			s := openTest(t, func(c *Config) { c.Tokenizer = tok; c.TenantKey = "team" })
			ctx := ctxT(t)
			minimal := mem("min", "only text", nil)
			unscoped := mem("free", "no tenant key", func(m *memory.Memory) { m.Scope = map[string]string{"user": "u1"} })
			want := []*memory.Memory{full("full"), minimal, unscoped}
			put(t, s, want...)
			for _, w := range want {
				got, err := s.Get(ctx, w.Scope, w.ID)
				if err != nil {
					t.Fatalf("get %s: %v", w.ID, err)
				}
				if !reflect.DeepEqual(got, w) {
					t.Errorf("get %s:\n got %#v\nwant %#v", w.ID, got, w)
				}
				if w.Embedding != nil {
					for i, x := range got.Embedding.Vector {
						if math.Float32bits(x) != math.Float32bits(w.Embedding.Vector[i]) {
							t.Errorf("vector[%d] = %v, want %v bit for bit", i, x, w.Embedding.Vector[i])
						}
					}
				}
			}
			// Without vectors the embedding names model and dim only.
			many, err := s.GetMany(ctx, map[string]string{"team": "t1"}, []string{"full", "min", "nope"}, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(many) != 1 || many["full"] == nil {
				t.Fatalf("GetMany in team t1 = %v, want only full", keys(many))
			}
			if e := many["full"].Embedding; e == nil || e.Model != "glove100-mean-v1" || e.Dim != 8 || e.Vector != nil {
				t.Errorf("embedding without vectors = %+v", e)
			}
		})
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestPutIsIdempotent: writing the same batch again (a retry) changes
// nothing, and a write replaces the whole memory (no field survives from
// the older version).
func TestPutIsIdempotent(t *testing.T) {
	s := openTest(t, nil)
	ctx := ctxT(t)
	batch := make([]*memory.Memory, 250) // three requests at BatchSize 100
	for i := range batch {
		batch[i] = full(strings.Repeat("x", i%3+1) + string(rune('a'+i%26)) + time.Duration(i).String())
	}
	put(t, s, batch...)
	put(t, s, batch...)
	if n, err := s.Count(ctx, memory.Filter{}); err != nil || n != len(batch) {
		t.Fatalf("count after a repeated batch = %d, %v; want %d", n, err, len(batch))
	}
	m := full("replace")
	put(t, s, m)
	newer := mem("replace", "new text", func(x *memory.Memory) { x.Scope = m.Scope }) // same id and scope: the same memory
	put(t, s, newer)
	got, err := s.Get(ctx, nil, "replace")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, newer) {
		t.Errorf("after replace got %#v, want %#v", got, newer)
	}
}

// TestPutRefusesBadInput: each bad memory is refused with ErrInvalid naming
// it, before anything is sent, so the good memories of its batch are not
// written either.
func TestPutRefusesBadInput(t *testing.T) {
	s := openTest(t, func(c *Config) { c.TenantKey = "team" })
	ctx := ctxT(t)
	cases := []struct {
		name string
		edit func(m *memory.Memory)
		want string
	}{
		{"invalid UTF-8 text", func(m *memory.Memory) { m.Text = "bad \xff byte" }, "not valid UTF-8"},
		{"invalid UTF-8 tag", func(m *memory.Memory) { m.Tags = []string{"\xfe"} }, "not valid UTF-8"},
		{"trailing space in a scope value", func(m *memory.Memory) { m.Scope = map[string]string{"user": "u1 "} }, "surrounding whitespace"},
		{"leading space in a scene", func(m *memory.Memory) { m.Scene = " x" }, "surrounding whitespace"},
		{"NaN in the vector", func(m *memory.Memory) { m.Embedding.Vector[2] = float32(math.NaN()) }, "embedding value 2"},
		{"dim that does not match", func(m *memory.Memory) { m.Embedding.Dim = 3 }, "dim"},
		{"uses beyond 2^53", func(m *memory.Memory) { m.Uses = 1<<53 + 1 }, "uses"},
		{"infinite demand", func(m *memory.Memory) { m.Demand = math.Inf(1) }, "demand"},
		{"no created_at", func(m *memory.Memory) { m.CreatedAt = time.Time{} }, "created_at"},
		{"metadata that is not JSON", func(m *memory.Memory) { m.Metadata = json.RawMessage(`{"a":`) }, "metadata"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			good := full("good")
			bad := full("bad")
			c.edit(bad)
			err := s.Put(ctx, []*memory.Memory{good, bad})
			if !errors.Is(err, memory.ErrInvalid) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `"bad"`) {
				t.Fatalf("err = %v, want ErrInvalid naming \"bad\" and %q", err, c.want)
			}
			if n, err := s.Count(ctx, memory.Filter{}); err != nil || n != 0 {
				t.Fatalf("count = %d, %v after a refused batch; want 0", n, err)
			}
		})
	}
	t.Run("an id twice in one tenant", func(t *testing.T) {
		err := s.Put(ctx, []*memory.Memory{full("dup"), full("dup")})
		if !errors.Is(err, memory.ErrInvalid) || !strings.Contains(err.Error(), "repeats") {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestTimesToTheNanosecond: since and until compare created_at at full
// precision (since inclusive, until exclusive), as memory.Filter.Match does.
func TestTimesToTheNanosecond(t *testing.T) {
	s := openTest(t, nil)
	ctx := ctxT(t)
	for i := range 3 {
		put(t, s, mem(string(rune('a'+i)), "tick", func(m *memory.Memory) { m.CreatedAt = t0.Add(time.Duration(i)) }))
	}
	at := func(d int) *time.Time { x := t0.Add(time.Duration(d)); return &x }
	cases := []struct {
		name         string
		since, until *time.Time
		want         int
	}{
		{"since the middle nanosecond", at(1), nil, 2},
		{"until the middle nanosecond", nil, at(1), 1},
		{"exactly one nanosecond", at(1), at(2), 1},
		{"empty range", at(3), nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, err := s.Count(ctx, memory.Filter{Since: c.since, Until: c.until})
			if err != nil || n != c.want {
				t.Fatalf("count = %d, %v; want %d", n, err, c.want)
			}
		})
	}
}

// TestRecordUse: a use adds one to uses and to demand decayed to now, for
// the memories inside the scope only, and leaves every other field as it was.
func TestRecordUse(t *testing.T) {
	s := openTest(t, func(c *Config) { c.TenantKey = "team" })
	ctx := ctxT(t)
	used := full("used") // team t1, demand π at 2026-12-01T23:59:59.999999999Z
	other := full("used")
	other.Scope = map[string]string{"team": "t2"}
	fresh := mem("fresh", "never used", func(m *memory.Memory) { m.Scope = map[string]string{"team": "t1"} })
	put(t, s, used, other, fresh)
	now := used.DemandAt.Add(memory.DemandHalfLife)
	if err := s.RecordUse(ctx, map[string]string{"team": "t1"}, []string{"used", "fresh", "gone"}, now); err != nil {
		t.Fatal(err)
	}
	wantUsed := *used
	wantUsed.Uses++
	wantUsed.Demand = used.Demand/2 + 1
	wantUsed.DemandAt = &now
	wantFresh := *fresh
	wantFresh.Uses, wantFresh.Demand, wantFresh.DemandAt = 1, 1, &now
	for _, w := range []*memory.Memory{&wantUsed, &wantFresh, other} {
		got, err := s.Get(ctx, w.Scope, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got.Demand-w.Demand) < 1e-12 {
			got.Demand = w.Demand
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("after a use, %s in %v:\n got %#v\nwant %#v", w.ID, w.Scope, got, w)
		}
	}
}

// TestCountBy counts by field, against counting the fixture by hand.
func TestCountBy(t *testing.T) {
	s := openTest(t, func(c *Config) { c.TenantKey = "team" })
	ctx := ctxT(t)
	mems := fixture()
	mems[3].Favorite = true
	mems[4].Embedding = nil
	put(t, s, mems...)
	for _, f := range []memory.Filter{{}, {Scope: map[string]string{"team": "a"}}, {Tags: []string{"x"}}} {
		for _, field := range []string{"type", "scene", "source", "embed_model", "favorite"} {
			want := map[string]int{}
			for _, m := range mems {
				if !f.Match(m) {
					continue
				}
				v := map[string]string{"type": m.Type, "scene": m.Scene, "source": m.Source, "favorite": fmt.Sprint(m.Favorite)}[field]
				if field == "embed_model" && m.Embedding != nil {
					v = m.Embedding.Model
				}
				if v != "" {
					want[v]++
				}
			}
			got, err := s.CountBy(ctx, f, field)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("CountBy(%+v, %s) = %v, want %v", f, field, got, want)
			}
		}
	}
}
