package engram_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/memory"
)

// TestDuplicatesByNormalText: a repeat is found by its text normalised
// (NFC, white space collapsed) in exactly its scope, whatever its name and
// description; case and other scopes make another memory.
func TestDuplicatesByNormalText(t *testing.T) {
	ctx := context.Background()
	u7 := map[string]string{"user": "u7"}
	cases := []struct {
		name   string
		stored *engram.Memory
		repeat *engram.Memory
		merged bool
	}{
		{"imported with a name, added again without",
			&engram.Memory{Name: "Theme", Description: "editor colours", Text: "Prefers dark themes in every editor", Scope: u7},
			&engram.Memory{Text: "Prefers dark themes in every editor", Scope: u7}, true},
		{"white space differs",
			&engram.Memory{Text: "Prefers dark themes\nin every editor", Scope: u7},
			&engram.Memory{Text: "  Prefers dark   themes in\tevery editor \n", Scope: u7}, true},
		{"composed and decomposed accents",
			&engram.Memory{Text: "Meets at the caf\u00e9 on Fridays", Scope: u7},
			&engram.Memory{Text: "Meets at the cafe\u0301 on Fridays", Scope: u7}, true},
		{"case differs",
			&engram.Memory{Text: "Deploys go through US region", Scope: u7},
			&engram.Memory{Text: "deploys go through us region", Scope: u7}, false},
		{"another scope",
			&engram.Memory{Text: "Prefers dark themes in every editor", Scope: u7},
			&engram.Memory{Text: "Prefers dark themes in every editor", Scope: map[string]string{"user": "u8"}}, false},
		{"a caller's id is stored under it",
			&engram.Memory{Text: "Prefers dark themes in every editor", Scope: u7},
			&engram.Memory{ID: "mine", Text: "Prefers dark themes in every editor", Scope: u7}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := openTest(t, engram.Options{NoEmbedder: true})
			first := add(t, db, c.stored)[0]
			res, err := db.Add(ctx, c.repeat)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(res.Merged) == 1 && res.IDs[0] == first; got != c.merged {
				t.Fatalf("merged %v (result %+v), want %v", got, res, c.merged)
			}
			if want := map[bool]int{true: 1, false: 2}[c.merged]; db.Count() != want {
				t.Fatalf("%d memories stored, want %d", db.Count(), want)
			}
			if c.merged { // the stored memory keeps its own text, name and description
				got, err := db.Get(ctx, first)
				if err != nil || got.Text != c.stored.Text || got.Name != c.stored.Name || got.Description != c.stored.Description {
					t.Fatalf("stored memory after the merge: %+v, %v", got, err)
				}
			}
		})
	}
}

// TestMergeKeepsTheRepeatsFields: a repeat's new tags, favorite, metadata
// keys and type are merged into the stored memory, and the result says so;
// its other differing fields are kept out, and named; a repeat that brings
// nothing new changes nothing.
func TestMergeKeepsTheRepeatsFields(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, engram.Options{NoEmbedder: true})
	id := add(t, db, &engram.Memory{Name: "Theme", Text: "Prefers dark themes", Tags: []string{"ui"},
		Metadata: json.RawMessage(`{"app": "vim", "weight": 1}`)})[0]
	before, _ := db.Get(ctx, id)
	res, err := db.Add(ctx, &engram.Memory{Name: "Colours", Text: "Prefers dark themes", Tags: []string{"editor", "ui"}, Favorite: true,
		Type: "preference", Source: "chat", Metadata: json.RawMessage(`{"weight": 2, "since": "2024"}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := []engram.Merge{{Index: 0, ID: id, MergeChanges: memory.MergeChanges{Tags: []string{"editor"}, Favorite: true,
		Metadata: []string{"since", "weight"}, Type: "preference", Kept: []string{"name", "source"}}}}
	if !reflect.DeepEqual(res.Merged, want) {
		t.Fatalf("merged %+v\nwant   %+v", res.Merged, want)
	}
	got, err := db.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Tags, []string{"editor", "ui"}) || !got.Favorite || got.Type != "preference" || got.Name != "Theme" ||
		got.Source != "" || string(got.Metadata) != `{"app":"vim","since":"2024","weight":2}` || !got.UpdatedAt.After(before.UpdatedAt) {
		t.Fatalf("stored after the merge: %+v (metadata %s)", got, got.Metadata)
	}
	// The index sees the merge: the new tag filters to it.
	if resp := search(t, db, engram.Query{Query: "dark themes", Filter: engram.Filter{Tags: []string{"editor"}}, NoRecord: true}); len(resp.Results) != 1 {
		t.Fatalf("search by the merged tag: %v", ids(resp))
	}
	again, err := db.Add(ctx, &engram.Memory{Text: "Prefers dark themes", Tags: []string{"ui"}})
	if err != nil || len(again.Merged) != 1 || again.Merged[0].MergeChanges.Changed() || len(again.Merged[0].Kept) != 0 {
		t.Fatalf("a repeat with nothing new: %+v, %v", again, err)
	}
	if after, _ := db.Get(ctx, id); !after.UpdatedAt.Equal(got.UpdatedAt) {
		t.Fatal("a repeat with nothing new changed the memory")
	}
	// Two repeats in one call merge into the first copy, then into the store.
	res, err = db.Add(ctx, &engram.Memory{Text: "Prefers dark themes", Tags: []string{"a"}}, &engram.Memory{Text: "Prefers  dark themes", Tags: []string{"b"}})
	if err != nil || len(res.Merged) != 2 || res.IDs[0] != id || res.IDs[1] != id {
		t.Fatalf("two repeats in one call: %+v, %v", res, err)
	}
	if got, _ := db.Get(ctx, id); !slices.Equal(got.Tags, []string{"a", "b", "editor", "ui"}) {
		t.Fatalf("tags after two repeats in one call: %v", got.Tags)
	}
}

// TestConcurrentDuplicateMergesLoseNothing: many goroutines on two handles
// of one file add the same text at once, each with its own tag and metadata
// key; every round stores one memory holding every tag and key (each merge
// reads and writes the memory in one transaction). Many rounds, with -race.
func TestConcurrentDuplicateMergesLoseNothing(t *testing.T) {
	ctx := context.Background()
	a := openTest(t, engram.Options{NoEmbedder: true})
	b, err := engram.Open(ctx, a.Path(), engram.Options{NoEmbedder: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const rounds, writers = 30, 8
	for round := range rounds {
		text := fmt.Sprintf("round %d: the standup moved to 9:45", round)
		ids := make([]string, writers)
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for g := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				db := a
				if g%2 == 1 {
					db = b
				}
				res, err := db.Add(ctx, &engram.Memory{Text: text, Tags: []string{fmt.Sprintf("t%d", g)},
					Metadata: json.RawMessage(fmt.Sprintf(`{"k%d": %d}`, g, g)), Favorite: g == writers-1})
				if err != nil {
					errs <- err
					return
				}
				ids[g] = res.IDs[0]
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		for _, id := range ids {
			if id != ids[0] {
				t.Fatalf("round %d: adds name different memories: %v", round, ids)
			}
		}
		got, err := b.Get(ctx, ids[0])
		if err != nil {
			t.Fatal(err)
		}
		var meta map[string]int
		if err := json.Unmarshal(got.Metadata, &meta); err != nil {
			t.Fatal(err)
		}
		if len(got.Tags) != writers || len(meta) != writers || !got.Favorite {
			t.Fatalf("round %d: lost a merge: tags %v, metadata %s, favorite %v", round, got.Tags, got.Metadata, got.Favorite)
		}
	}
	if n := a.Count(); n != rounds {
		t.Fatalf("%d memories stored, want one per round (%d)", n, rounds)
	}
}
