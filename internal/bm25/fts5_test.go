package bm25

import (
	"database/sql"
	"math/rand"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // registers the "sqlite" driver, FTS5 included
)

// TestMatchesFTS5 uses SQLite FTS5's bm25() as the oracle: same corpus, same
// queries, and our IDFRobertson scores must equal -bm25(t, w1, w2, w3) for
// every matching document, also after deletes and replacements. The words
// are lower-case alphanumeric, so FTS5's unicode61 tokenizer sees exactly
// our tokens.
func TestMatchesFTS5(t *testing.T) {
	tests := []struct {
		name    string
		weights []float64
		seed    int64
	}{
		{"unit weights", []float64{1, 1, 1}, 1},
		{"name heavy", []float64{3, 1.5, 1}, 2},
		{"fractional weights", []float64{0.7, 2.25, 0.1}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewSource(tc.seed))
			db := openFTS5(t)
			ix := New(Params{K1: DefaultK1, B: DefaultB, FieldWeights: tc.weights, IDF: IDFRobertson})
			const nDocs, vocab = 300, 50
			for d := range uint32(nDocs) {
				fields := randDoc(r, 3, vocab)
				ix.Add(d, fields)
				ftsExec(t, db, "INSERT INTO t(rowid, a, b, c) VALUES (?, ?, ?, ?)",
					d, strings.Join(fields[0], " "), strings.Join(fields[1], " "), strings.Join(fields[2], " "))
			}
			compareFTS5(t, r, db, ix, tc.weights, vocab, 150)

			for range 60 {
				d := uint32(r.Intn(nDocs))
				ix.Remove(d)
				ftsExec(t, db, "DELETE FROM t WHERE rowid = ?", d)
			}
			for range 40 {
				d := uint32(r.Intn(nDocs))
				fields := randDoc(r, 3, vocab)
				ix.Add(d, fields)
				ftsExec(t, db, "INSERT OR REPLACE INTO t(rowid, a, b, c) VALUES (?, ?, ?, ?)",
					d, strings.Join(fields[0], " "), strings.Join(fields[1], " "), strings.Join(fields[2], " "))
			}
			compareFTS5(t, r, db, ix, tc.weights, vocab, 150)
		})
	}
}

// compareFTS5 runs n random queries through both engines.
func compareFTS5(tb testing.TB, r *rand.Rand, db *sql.DB, ix *Index, w []float64, vocab, n int) {
	tb.Helper()
	matched := 0
	for range n {
		q := randQuery(r, vocab)
		quoted := make([]string, len(q))
		for i, term := range q {
			quoted[i] = `"` + term + `"`
		}
		rows, err := db.Query("SELECT rowid, -bm25(t, ?, ?, ?) FROM t WHERE t MATCH ?",
			w[0], w[1], w[2], strings.Join(quoted, " OR "))
		if err != nil {
			tb.Fatalf("fts5 query %q: %v", q, err)
		}
		want := map[uint32]float64{}
		for rows.Next() {
			var d uint32
			var s float64
			if err := rows.Scan(&d, &s); err != nil {
				tb.Fatalf("scan: %v", err)
			}
			want[d] = s
		}
		if err := rows.Err(); err != nil {
			tb.Fatalf("fts5 rows %q: %v", q, err)
		}
		rows.Close()

		got := ix.Search(q, nil, ix.Len()+1)
		if len(got) != len(want) {
			tb.Fatalf("query %q: %d hits, FTS5 has %d", q, len(got), len(want))
		}
		for _, h := range got {
			s, ok := want[h.Doc]
			if !ok || !relClose(h.Score, s, 1e-9) {
				tb.Fatalf("query %q doc %d: score %.17g, FTS5 %.17g (found %v)", q, h.Doc, h.Score, s, ok)
			}
		}
		matched += len(got)
	}
	if matched == 0 {
		tb.Fatal("no query matched anything; the test proves nothing")
	}
}

// openFTS5 opens an in-memory database holding the empty FTS5 table t(a, b, c).
func openFTS5(tb testing.TB) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		tb.Fatalf("open sqlite: %v", err)
	}
	db.SetMaxOpenConns(1) // each connection to ":memory:" is its own database
	tb.Cleanup(func() { db.Close() })
	ftsExec(tb, db, "CREATE VIRTUAL TABLE t USING fts5(a, b, c)")
	return db
}

func ftsExec(tb testing.TB, db *sql.DB, query string, args ...any) {
	tb.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
}
