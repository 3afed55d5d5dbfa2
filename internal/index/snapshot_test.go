package index

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/binenc"
	"github.com/engram-memory/engram/internal/bm25"
	"github.com/engram-memory/engram/internal/tokenize"
	"github.com/engram-memory/engram/memory"
)

func snapshotOf(tb testing.TB, ix *Index) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w := binenc.NewWriter(&buf)
	ix.WriteSnapshot(w)
	if err := w.Finish(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func load(b []byte, tok tokenize.Options) (*Index, error) {
	r := binenc.NewReader(bytes.NewReader(b), int64(len(b)))
	ix, err := ReadSnapshot(r, tokenize.New(tok), bm25.DefaultParams(NumFields), ANNOptions{})
	if err != nil {
		return nil, err
	}
	return ix, r.Verify()
}

// churned builds an index through puts, deletes and usage updates, with
// every optional memory field used and a vector the index cannot use.
func churned(tb testing.TB) *Index {
	tb.Helper()
	r := rand.New(rand.NewSource(9))
	ix := newIndex()
	at := time.Unix(50, 7).UTC()
	for i := range 3000 {
		m := randomMemory(r, r.Intn(400))
		switch r.Intn(8) {
		case 0:
			ix.Delete(m.Key())
			continue
		case 1:
			m.Metadata = json.RawMessage(`{"k":1}`)
			m.Favorite, m.Uses, m.Demand, m.DemandAt = true, 3, 1.5, &at
		case 2:
			m.Embedding = &memory.Embedding{Model: "zero", Dim: 2, Vector: []float32{0, 0}} // left out of the vector leg
		case 3:
			m.Embedding = &memory.Embedding{Model: "other", Dim: 2, Vector: []float32{1, float32(i)}}
		}
		ix.Put(m)
		if i%7 == 0 {
			u := *m
			u.Uses++
			ix.SetUsage(&u)
		}
	}
	return ix
}

func TestSnapshotRoundTrip(t *testing.T) {
	orig := churned(t)
	got, err := load(snapshotOf(t, orig), tokenize.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for d, m := range orig.docs {
		if m != nil && got.created[d] != orig.created[d] {
			t.Fatalf("doc %d: created %d, want %d", d, got.created[d], orig.created[d])
		}
	}
	if !reflect.DeepEqual(got.docs, orig.docs) ||
		!slices.Equal(got.free, orig.free) || !reflect.DeepEqual(got.byKey, orig.byKey) {
		for d := range orig.docs {
			if !reflect.DeepEqual(got.docs[d], orig.docs[d]) {
				t.Fatalf("doc %d: %+v, want %+v", d, got.docs[d], orig.docs[d])
			}
		}
		t.Fatal("memories differ after the round trip")
	}
	if !reflect.DeepEqual(got.Models(), orig.Models()) {
		t.Fatalf("models %v, want %v", got.Models(), orig.Models())
	}
	since := time.Unix(300, 0)
	filters := []*memory.Filter{
		nil,
		{Type: "fact"},
		{Scope: map[string]string{"team": "t1"}, Tags: []string{"x"}},
		{Scene: "work", Source: "cli"},
		{Since: &since},
	}
	for _, f := range filters {
		a, b := got.Allowed(f), orig.Allowed(f)
		if (a == nil) != (b == nil) || (a != nil && a.Len() != b.Len()) {
			t.Fatalf("filter %+v: allowed sets differ", f)
		}
		for _, q := range []string{"alpha", "beta gamma", "delta", "nothing"} {
			var scope map[string]string
			if f != nil {
				scope = f.Scope
			}
			ha, ua := got.BM25(q, got.Domain(scope), a, 20)
			hb, ub := orig.BM25(q, orig.Domain(scope), b, 20)
			if !slices.Equal(ha, hb) || ua != ub {
				t.Fatalf("filter %+v query %q: bm25 %v, want %v", f, q, ha, hb)
			}
		}
		for _, model := range []string{"m", "other"} {
			q := []float32{0.3, 0.5, 0.2}[:orig.Vectors(model).Dim()]
			if a, b := got.Vectors(model).Search(q, a, 20), orig.Vectors(model).Search(q, b, 20); !slices.Equal(a, b) {
				t.Fatalf("filter %+v model %s: vector %v, want %v", f, model, a, b)
			}
		}
	}
}

func TestSnapshotRejects(t *testing.T) {
	good := snapshotOf(t, churned(t))
	flipped := slices.Clone(good)
	flipped[len(flipped)/3] ^= 1
	noStem := tokenize.DefaultOptions()
	noStem.Stem = false
	for _, c := range []struct {
		name string
		in   []byte
		tok  tokenize.Options
	}{
		{"truncated", good[:len(good)-100], tokenize.DefaultOptions()},
		{"flipped byte", flipped, tokenize.DefaultOptions()},
		{"other tokenizer", good, noStem},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := load(c.in, c.tok); !errors.Is(err, binenc.ErrCorrupt) {
				t.Fatalf("got %v, want ErrCorrupt", err)
			}
		})
	}
}
