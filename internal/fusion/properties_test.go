package fusion

import (
	"math/rand"
	"slices"
	"testing"
)

// TestUnionKeepsEveryID checks that an ID returned by one leg only is kept,
// by every fusion and whatever the weights.
func TestUnionKeepsEveryID(t *testing.T) {
	legs := []Leg{
		{Name: "bm25", Weight: 1, Hits: hits("kw-only", 12, "both", 3)},
		{Name: "vector", Weight: 0.1, Hits: hits("both", 0.9, "vec-only", 0.2)},
		{Name: "muted", Weight: 0, Hits: hits("muted-only", 1)},
	}
	want := []string{"both", "kw-only", "muted-only", "vec-only"}
	for _, f := range fusers {
		t.Run(f.name, func(t *testing.T) {
			got := ids(f.fuse(legs))
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("ids %v, want %v", got, want)
			}
		})
	}
}

// TestDuplicatesCountOnce checks that repeating an ID later in a leg changes
// nothing but the positions of the hits after it.
func TestDuplicatesCountOnce(t *testing.T) {
	clean := []Leg{
		{Name: "a", Weight: 1, Hits: hits("x", 9, "y", 5, "z", 1)},
		{Name: "b", Weight: 1, Hits: hits("z", 0.9, "x", 0.5)},
	}
	dup := []Leg{
		{Name: "a", Weight: 1, Hits: hits("x", 9, "y", 5, "x", 50, "z", 1, "y", -3)},
		{Name: "b", Weight: 1, Hits: hits("z", 0.9, "z", 0.9, "x", 0.5)},
	}
	for _, f := range fusers {
		t.Run(f.name, func(t *testing.T) {
			got, ref := f.fuse(dup), f.fuse(clean)
			if !slices.Equal(ids(got), ids(ref)) {
				t.Fatalf("ids %v, without duplicates %v", ids(got), ids(ref))
			}
			for i := range got {
				if f.name != "rrf" && got[i].Score != ref[i].Score {
					t.Errorf("%s: score %g, without duplicates %g", got[i].ID, got[i].Score, ref[i].Score)
				}
			}
			pos := map[string][2]int{"x": {1, 3}, "y": {2, 0}, "z": {4, 1}}
			for _, g := range got {
				if p := pos[g.ID]; g.Legs[0].Rank != p[0] || g.Legs[1].Rank != p[1] {
					t.Errorf("%s: ranks %d,%d, want first occurrences %d,%d",
						g.ID, g.Legs[0].Rank, g.Legs[1].Rank, p[0], p[1])
				}
			}
		})
	}
}

// TestDeterministicOrder checks that the output does not depend on the order
// in which equal-scored hits or equally weighted legs arrive: ties break by ID.
func TestDeterministicOrder(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	base := hits("e", 2, "b", 2, "d", 2, "a", 1, "c", 1, "f", 0.5)
	other := hits("c", 7, "g", 7, "a", 7)
	for _, f := range fusers {
		t.Run(f.name, func(t *testing.T) {
			want := f.fuse([]Leg{{Name: "l", Weight: 1, Hits: base}, {Name: "m", Weight: 1, Hits: other}})
			for range 50 {
				// Shuffle within each run of equal scores; for RRF, where the position
				// is the score, swap the two equally weighted legs instead.
				p, q := slices.Clone(base), slices.Clone(other)
				r.Shuffle(3, func(i, j int) { p[i], p[j] = p[j], p[i] })
				r.Shuffle(2, func(i, j int) { p[3+i], p[3+j] = p[3+j], p[3+i] })
				r.Shuffle(3, func(i, j int) { q[i], q[j] = q[j], q[i] })
				legs := []Leg{{Name: "l", Weight: 1, Hits: p}, {Name: "m", Weight: 1, Hits: q}}
				if f.name == "rrf" {
					legs = []Leg{{Name: "m", Weight: 1, Hits: other}, {Name: "l", Weight: 1, Hits: base}}
				}
				got := f.fuse(legs)
				if !slices.Equal(ids(got), ids(want)) {
					t.Fatalf("order %v, want %v", ids(got), ids(want))
				}
				for i := range got {
					if got[i].Score != want[i].Score {
						t.Fatalf("%s: score %g, want %g", got[i].ID, got[i].Score, want[i].Score)
					}
				}
			}
			for i := 1; i < len(want); i++ {
				if want[i].Score == want[i-1].Score && want[i].ID < want[i-1].ID {
					t.Fatalf("tie %s, %s not in ID order", want[i-1].ID, want[i].ID)
				}
			}
		})
	}
}
