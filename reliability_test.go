package engram_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/embed"
)

// TestTimeRangeEdges: times are kept exactly inside the years a store holds
// and refused outside, instead of wrapping (2500-01-01 read back as
// 1915-06-14 before); an explicit 0001-01-01 is refused, not taken for now.
func TestTimeRangeEdges(t *testing.T) {
	db := openTest(t, engram.Options{NoEmbedder: true})
	for _, c := range []struct {
		name string
		at   time.Time
		ok   bool
	}{
		{"first instant", time.Date(1678, 1, 1, 0, 0, 0, 0, time.UTC), true},
		{"last instant", time.Date(2261, 12, 31, 23, 59, 59, 999999999, time.UTC), true},
		{"2500", time.Date(2500, 1, 1, 0, 0, 0, 0, time.UTC), false},
		{"2262-04-12, past int64 nanoseconds", time.Date(2262, 4, 12, 0, 0, 0, 0, time.UTC), false},
		{"1677", time.Date(1677, 12, 31, 23, 59, 59, 0, time.UTC), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A text of its own: an exact repeat would be merged into the first.
			res, err := db.Add(ctx, &engram.Memory{Text: "a memory at the edge: " + c.name, CreatedAt: c.at})
			if !c.ok {
				if !errors.Is(err, engram.ErrInvalid) || !strings.Contains(err.Error(), "created_at") {
					t.Fatalf("Add at %v: %v, want ErrInvalid naming created_at", c.at, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			m, err := db.Get(ctx, res.IDs[0])
			if err != nil || !m.CreatedAt.Equal(c.at) {
				t.Fatalf("read back %v, %v; want %v", m.CreatedAt, err, c.at)
			}
		})
	}
	for _, line := range []string{
		`{"text": "x", "created_at": "0001-01-01T00:00:00Z"}`,
		`{"text": "x", "updated_at": "2500-01-01T00:00:00Z"}`,
		`{"text": "x", "demand": 1, "demand_at": "3000-01-01T00:00:00Z"}`,
	} {
		if _, err := db.Import(ctx, strings.NewReader(line), engram.ImportOptions{}); !errors.Is(err, engram.ErrInvalid) {
			t.Fatalf("import of %s: %v, want ErrInvalid", line, err)
		}
	}
	since := time.Date(2500, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := db.Search(ctx, engram.Query{Query: "edge", Filter: engram.Filter{Since: &since}}); !errors.Is(err, engram.ErrInvalidQuery) {
		t.Fatalf("search since 2500: %v", err)
	}
	if _, err := db.Brief(ctx, engram.BriefOptions{Filter: engram.Filter{Since: &since}}); !errors.Is(err, engram.ErrInvalid) {
		t.Fatalf("brief since 2500: %v", err)
	}
}

// TestEmptyPatchWritesNothing: a PATCH that changes nothing leaves the memory,
// updated_at included, as it was.
func TestEmptyPatchWritesNothing(t *testing.T) {
	db := openTest(t, engram.Options{NoEmbedder: true})
	id := add(t, db, &engram.Memory{Text: "unchanged", Name: "n"})[0]
	before, _ := db.Get(ctx, id)
	time.Sleep(2 * time.Millisecond)
	same := "n"
	for _, p := range []engram.Patch{{}, {Name: &same}} {
		got, err := db.Update(ctx, id, p)
		if err != nil || !got.UpdatedAt.Equal(before.UpdatedAt) {
			t.Fatalf("patch %+v: %+v, %v; updated_at moved from %v", p, got, err, before.UpdatedAt)
		}
	}
	if after, _ := db.Get(ctx, id); !after.UpdatedAt.Equal(before.UpdatedAt) {
		t.Fatalf("stored updated_at moved: %v → %v", before.UpdatedAt, after.UpdatedAt)
	}
}

// TestVectorsChecked: a vector given with a memory is refused when it could
// never be compared: the current model's name with another dimension (the
// store's or the embedder's), all zeros, or not finite.
func TestVectorsChecked(t *testing.T) {
	fake := embed.Func{ModelID: "test:3d", F: func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i := range out {
			out[i] = []float32{1, 0, 0}
		}
		return out, nil
	}}
	db := openTest(t, engram.Options{Embedder: fake})
	for _, c := range []struct {
		name string
		vec  []float32
		ok   bool
	}{
		{"the embedder's model at its dimension", []float32{0, 1, 0}, true},
		{"the embedder's model, another dimension", []float32{1, 0}, false},
		{"all zeros", []float32{0, 0, 0}, false},
	} {
		_, err := db.Add(ctx, &engram.Memory{Text: c.name, Embedding: &engram.Embedding{Model: "test:3d", Vector: c.vec}})
		if c.ok != (err == nil) || (!c.ok && !errors.Is(err, engram.ErrInvalid)) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// Without an embedder a given vector is kept; a model's first vector in
	// the store sets its dimension.
	db = openTest(t, engram.Options{NoEmbedder: true})
	if _, err := db.Add(ctx, &engram.Memory{Text: "other", Embedding: &engram.Embedding{Model: "other", Vector: []float32{1, 2}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Add(ctx, &engram.Memory{Text: "other again", Embedding: &engram.Embedding{Model: "other", Vector: []float32{1, 2, 3}}}); !errors.Is(err, engram.ErrInvalid) {
		t.Fatalf("a second dimension for a model the store holds: %v", err)
	}
}
