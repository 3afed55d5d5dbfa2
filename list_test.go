package engram_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/memory"
)

// listAll pages through a listing with limit, failing on an error or on
// more pages than there are memories (a cursor that does not advance), and
// returns the keys listed, in order.
func listAll(t testing.TB, db *engram.DB, order string, limit, n int) []string {
	t.Helper()
	var keys []string
	opt := engram.ListOptions{Order: order, Limit: limit}
	for pages := 0; ; pages++ {
		if pages > n+1 {
			t.Fatalf("order %s limit %d: more than %d pages for %d memories: the cursor does not advance (keys so far %q)",
				order, limit, n+1, n, keys)
		}
		page, err := db.List(context.Background(), opt)
		if err != nil {
			t.Fatalf("order %s limit %d: %v", order, limit, err)
		}
		for _, m := range page.Memories {
			keys = append(keys, m.Key())
		}
		if page.NextCursor == "" {
			return keys
		}
		opt.Cursor = page.NextCursor
	}
}

// checkListing fails unless every memory of mems is listed exactly once, in
// order, whatever the page size.
func checkListing(t testing.TB, db *engram.DB, mems []*engram.Memory, limits []int) {
	t.Helper()
	for _, order := range engram.ListOrders {
		want := wantOrder(mems, order)
		for _, limit := range limits {
			got := listAll(t, db, order, limit, len(mems))
			if !slices.Equal(got, want) {
				t.Fatalf("order %s limit %d:\n got %q\nwant %q", order, limit, got, want)
			}
		}
	}
}

// wantOrder is the reference order: the order's field, then id (descending
// only for "-id"), then the scope's canonical text in the id's direction.
func wantOrder(mems []*engram.Memory, order string) []string {
	desc := strings.HasPrefix(order, "-")
	field := func(m *engram.Memory) int64 {
		switch strings.TrimPrefix(order, "-") {
		case "created_at":
			return m.CreatedAt.UnixNano()
		case "updated_at":
			return m.UpdatedAt.UnixNano()
		case "occurred_at":
			return m.OccurredAt.UnixNano()
		case "uses":
			return m.Uses
		case "seq":
			return m.Seq
		}
		return 0
	}
	sorted := slices.Clone(mems)
	slices.SortFunc(sorted, func(a, b *engram.Memory) int {
		if c := cmp.Compare(field(a), field(b)); c != 0 {
			if desc {
				return -c
			}
			return c
		}
		c := cmp.Or(strings.Compare(a.ID, b.ID), strings.Compare(memory.ScopeJSON(a.Scope), memory.ScopeJSON(b.Scope)))
		if order == "-id" {
			return -c
		}
		return c
	})
	keys := make([]string, len(sorted))
	for i, m := range sorted {
		keys[i] = m.Key()
	}
	return keys
}

// TestListSameIDInScopes: a listing pages through memories that share an id
// in several scopes, in every order, listing each exactly once (the cursor
// names the last memory's scope too, so the order is total).
func TestListSameIDInScopes(t *testing.T) {
	db := openTest(t, engram.Options{})
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	mems := []*engram.Memory{
		{ID: "same", Text: "one", Scope: map[string]string{"team": "a"}, CreatedAt: at},
		{ID: "same", Text: "two", Scope: map[string]string{"team": "b"}, CreatedAt: at},
		{ID: "same", Text: "three", Scope: map[string]string{"team": "a", "user": "u1"}, CreatedAt: at},
		{ID: "other", Text: "four", CreatedAt: at},
	}
	add(t, db, mems...)
	page, err := db.List(context.Background(), engram.ListOptions{Order: engram.OrderID, Limit: engram.MaxListLimit})
	if err != nil || len(page.Memories) != len(mems) {
		t.Fatalf("stored: %v, %d memories, want %d", err, len(page.Memories), len(mems))
	}
	checkListing(t, db, page.Memories, []int{1, 2, 3, 4, 5})
}

// TestListCursorInvalid: a cursor that no listing returned is refused with
// one line naming it, never read as the first page.
func TestListCursorInvalid(t *testing.T) {
	db := openTest(t, engram.Options{})
	add(t, db, &engram.Memory{ID: "a", Text: "one"}, &engram.Memory{ID: "b", Text: "two"})
	page, err := db.List(context.Background(), engram.ListOptions{Order: "id", Limit: 1})
	if err != nil || page.NextCursor == "" {
		t.Fatalf("first page: %v %+v", err, page)
	}
	for _, c := range []string{"%%%", "!", "eyJ4IjoxfQ", "e30", strings.Repeat("A", 40), page.NextCursor + "x"} {
		_, err := db.List(context.Background(), engram.ListOptions{Order: "id", Limit: 1, Cursor: c})
		if !errors.Is(err, engram.ErrInvalid) || !strings.Contains(err.Error(), "cursor") || strings.Contains(err.Error(), "\n") {
			t.Errorf("cursor %q: err %v, want one line refusing the cursor", c, err)
		}
	}
	if _, err := db.List(context.Background(), engram.ListOptions{Order: "-id", Limit: 1, Cursor: page.NextCursor}); !errors.Is(err, engram.ErrInvalid) {
		t.Errorf("cursor of another order: err %v, want ErrInvalid", err)
	}
}

// FuzzListPaging: over random small stores where ids repeat across scopes
// and sort keys tie, every order at every page size lists each memory
// exactly once, in the order's total order.
func FuzzListPaging(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
	f.Add([]byte{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3})
	f.Add([]byte("same id in every scope, uses and times tied"))
	scopes := []map[string]string{nil, {"team": "a"}, {"team": "b"}, {"team": "a", "user": "u1"}, {"user": "u1"}}
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	base := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		// Three bytes a memory: id and scope, sort keys, times.
		var mems []*engram.Memory
		seen := map[string]bool{}
		for i := 0; i+2 < len(data) && len(mems) < 12; i += 3 {
			a, b, c := data[i], data[i+1], data[i+2]
			m := &engram.Memory{ID: fmt.Sprintf("m%d", a%4), Text: fmt.Sprintf("memory %d", len(mems)),
				Scope: scopes[int(a/4)%len(scopes)], Uses: int64(b % 3),
				CreatedAt: at.Add(time.Duration(c%3) * time.Hour), UpdatedAt: at.Add(time.Duration(c/3%3) * time.Hour)}
			if b/3%2 == 1 {
				m.Episode, m.Seq = "chat", int64(b/6%3)
				m.OccurredAt = at.Add(time.Duration(c/9%3) * time.Minute)
			}
			if seen[m.Key()] {
				continue
			}
			seen[m.Key()] = true
			mems = append(mems, m)
		}
		// Not t.TempDir: a fuzz input's directory is named after "seed#N",
		// and the store's file: URI reads '#' as the end of its path.
		dir, err := os.MkdirTemp(base, "s")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		db, err := engram.Open(context.Background(), filepath.Join(dir, "t.db"), engram.Options{NoEmbedder: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if len(mems) > 0 {
			add(t, db, mems...)
		}
		// The stored memories (times and uses as the store keeps them).
		page, err := db.List(context.Background(), engram.ListOptions{Order: engram.OrderID, Limit: engram.MaxListLimit})
		if err != nil {
			t.Fatal(err)
		}
		stored := page.Memories
		if len(stored) != len(mems) {
			t.Fatalf("stored %d memories, want %d", len(stored), len(mems))
		}
		checkListing(t, db, stored, []int{1, 2, 3, 5})
	})
}

// TestScopeWhitespaceGoAPI: the Go API refuses a scope value with surrounding
// whitespace wherever a scope is given, naming it, and deletes nothing.
func TestScopeWhitespaceGoAPI(t *testing.T) {
	db := openTest(t, engram.Options{NoEmbedder: true})
	add(t, db, &engram.Memory{ID: "a1", Text: "team a's", Scope: map[string]string{"team": "a"}})
	bad := map[string]string{"team": "a "}
	ctx := context.Background()
	for name, err := range map[string]error{
		"WithScope": func() error { _, err := db.WithScope(bad); return err }(),
		"Within":    func() error { _, err := db.Within(bad); return err }(),
		"Add":       func() error { _, err := db.Add(ctx, &engram.Memory{Text: "x", Scope: bad}); return err }(),
		"List": func() error {
			_, err := db.List(ctx, engram.ListOptions{Filter: engram.Filter{Scope: bad}})
			return err
		}(),
		"DeleteScope": func() error { _, err := db.DeleteScope(ctx, bad); return err }(),
		"Search": func() error {
			_, err := db.Search(ctx, engram.Query{Query: "team", Filter: engram.Filter{Scope: bad}})
			return err
		}(),
	} {
		if !(errors.Is(err, engram.ErrInvalid) || errors.Is(err, engram.ErrInvalidQuery)) || !strings.Contains(err.Error(), `team="a "`) {
			t.Errorf("%s: %v, want ErrInvalid naming team=\"a \"", name, err)
		}
	}
	if n := db.Count(); n != 1 {
		t.Fatalf("%d memories, want 1", n)
	}
}
