package engram_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/engram-memory/engram"
)

// rowsRead is the SQLite backend's count of memory rows read.
func rowsRead(t testing.TB, db *engram.DB) int64 {
	t.Helper()
	c, ok := db.Backend().(interface{ RowsRead() int64 })
	if !ok {
		t.Fatal("the backend does not count its row reads")
	}
	return c.RowsRead()
}

// TestReadsBounded: recording uses reads each used row's counters once, in
// the write that counts them, and never the rows again: a tenant's Touch of
// N ids reads N rows, a search that records its R results reads R, and the
// index sees the new counters at once.
func TestReadsBounded(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, engram.Options{})
	var mems []*engram.Memory
	for i := range 30 {
		mems = append(mems, &engram.Memory{Text: fmt.Sprintf("note %d about the deploy pipeline", i), Scope: map[string]string{"team": []string{"a", "b"}[i%2]}})
	}
	add(t, db, mems...)
	view, err := db.WithScope(map[string]string{"team": "a"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := view.Search(ctx, engram.Query{Query: "deploy pipeline", Limit: 10, NoRecord: true})
	if err != nil || len(resp.Results) != 10 {
		t.Fatalf("%d results, %v", len(resp.Results), err)
	}
	touched := ids(resp)

	before := rowsRead(t, db)
	if err := view.Touch(ctx, touched...); err != nil {
		t.Fatal(err)
	}
	if n := rowsRead(t, db) - before; n > int64(len(touched)) {
		t.Fatalf("Scoped.Touch of %d ids read %d rows", len(touched), n)
	}

	before = rowsRead(t, db)
	resp, err = view.Search(ctx, engram.Query{Query: "deploy pipeline", Limit: 10})
	if err != nil || len(resp.Degraded) != 0 {
		t.Fatalf("search: %v, degraded %v", err, resp.Degraded)
	}
	if n := rowsRead(t, db) - before; n != int64(len(resp.Results)) {
		t.Fatalf("a search recording %d uses read %d rows", len(resp.Results), n)
	}
	// The next search sees both uses without reading a row.
	before = rowsRead(t, db)
	again, err := view.Search(ctx, engram.Query{Query: "deploy pipeline", Limit: 10, NoRecord: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := rowsRead(t, db) - before; n != 0 {
		t.Fatalf("a search read %d rows", n)
	}
	for _, r := range again.Results {
		if r.Explain.Boosts.Demand <= 1 {
			t.Fatalf("%s: demand boost %v after two uses", r.ID, r.Explain.Boosts.Demand)
		}
	}
	if m, err := view.Get(ctx, touched[0]); err != nil || m.Uses != 2 {
		t.Fatalf("uses after a touch and a search: %+v, %v", m, err)
	}
}
