package engram_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/memory"
)

// TestExactDuplicatesMerged: the same content in the same scope, given
// without an id, is stored once — against the store and within one call —
// and the result says which memory holds it; another scope, other content or
// a caller's id is stored anew.
func TestExactDuplicatesMerged(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, engram.Options{})
	first, err := db.Add(ctx, &engram.Memory{Text: "The user prefers dark themes.", Scope: map[string]string{"user": "u7"}})
	if err != nil || len(first.Merged) != 0 {
		t.Fatalf("first add: %+v, %v", first, err)
	}
	orig := first.IDs[0]
	res, err := db.Add(ctx,
		&engram.Memory{Text: "The user prefers dark themes.", Scope: map[string]string{"user": "u7"}, Type: "preference"}, // 0: merged
		&engram.Memory{Text: "The user prefers dark themes.", Scope: map[string]string{"user": "u8"}},                     // 1: other scope
		&engram.Memory{Text: "The user prefers light themes.", Scope: map[string]string{"user": "u7"}},                    // 2: other text
		&engram.Memory{Text: "The user prefers light themes.", Scope: map[string]string{"user": "u7"}},                    // 3: repeats 2
		&engram.Memory{ID: "mine", Text: "The user prefers dark themes.", Scope: map[string]string{"user": "u7"}},         // 4: an id: stored
	)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint([]engram.Merge{{Index: 0, ID: orig, MergeChanges: memory.MergeChanges{Type: "preference"}}, {Index: 3, ID: res.IDs[2]}})
	if fmt.Sprint(res.Merged) != want || res.IDs[0] != orig || res.IDs[3] != res.IDs[2] || res.IDs[4] != "mine" {
		t.Fatalf("merged %v (want %s), ids %v", res.Merged, want, res.IDs)
	}
	if res.Embedded != 3 {
		t.Errorf("embedded %d, want the 3 memories stored", res.Embedded)
	}
	if n := db.Count(); n != 4 {
		t.Fatalf("%d memories stored, want 4", n)
	}
	// Scoped views merge inside their scope only.
	u7, err := db.WithScope(map[string]string{"user": "u7"})
	if err != nil {
		t.Fatal(err)
	}
	res, err = u7.Add(ctx, &engram.Memory{Text: "The user prefers dark themes."})
	if err != nil || len(res.Merged) != 1 || res.IDs[0] != orig {
		t.Fatalf("scoped add: %+v, %v", res, err)
	}
	// Import reports merges too; an export's lines carry ids and restore as they are.
	var buf bytes.Buffer
	if err := db.Export(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	imp, err := db.Import(ctx, strings.NewReader(`{"text": "The user prefers light themes.", "scope": {"user": "u7"}}`+"\n"), engram.ImportOptions{})
	if err != nil || len(imp.Merged) != 1 {
		t.Fatalf("import: %+v, %v", imp, err)
	}
	fresh := openTest(t, engram.Options{})
	if _, err := fresh.Import(ctx, &buf, engram.ImportOptions{}); err != nil || fresh.Count() != 4 {
		t.Fatalf("export restored %d memories (%v), want 4", fresh.Count(), err)
	}
}

// TestConcurrentDuplicatesStoredOnce: many goroutines on two handles add the
// same memory at once; it is stored once and every add names it. Many rounds,
// with -race.
func TestConcurrentDuplicatesStoredOnce(t *testing.T) {
	ctx := context.Background()
	a := openTest(t, engram.Options{NoEmbedder: true})
	b, err := engram.Open(ctx, a.Path(), engram.Options{NoEmbedder: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for round := range 20 {
		text := fmt.Sprintf("round %d: the standup moved to 9:45", round)
		ids := make([]string, 8)
		var wg sync.WaitGroup
		errs := make(chan error, len(ids))
		for g := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				db := a
				if g%2 == 1 {
					db = b
				}
				res, err := db.Add(ctx, &engram.Memory{Text: text})
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
	}
	if n := a.Count(); n != 20 {
		t.Fatalf("%d memories stored, want one per round (20)", n)
	}
}

// TestImportProgress: an import reports its embedding progress batch by
// batch, ending at the total (the CLI draws it as a bar on a terminal).
func TestImportProgress(t *testing.T) {
	db := openTest(t, engram.Options{})
	var b strings.Builder
	for i := range 600 {
		fmt.Fprintf(&b, `{"text": "memory number %d about the deploy"}`+"\n", i)
	}
	var calls [][2]int
	_, err := db.Import(context.Background(), strings.NewReader(b.String()), engram.ImportOptions{
		Progress: func(done, total int) { calls = append(calls, [2]int{done, total}) }})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(calls) != "[[256 600] [512 600] [600 600]]" {
		t.Fatalf("progress calls %v", calls)
	}
}
