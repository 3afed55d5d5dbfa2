package ann

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/engram-memory/engram/internal/binenc"
	"github.com/engram-memory/engram/internal/docset"
	"github.com/engram-memory/engram/internal/synth"
	"github.com/engram-memory/engram/internal/vector"
)

// clustered returns n unit-ish vectors of dim components around a few
// centres, the shape embeddings have, from seed.
func clustered(seed uint64, n, dim, centres int) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 7))
	cs := make([][]float32, centres)
	for i := range cs {
		cs[i] = make([]float32, dim)
		for j := range cs[i] {
			cs[i][j] = float32(r.NormFloat64())
		}
	}
	out := make([][]float32, n)
	for i := range out {
		c := cs[r.IntN(centres)]
		v := make([]float32, dim)
		for j := range v {
			v[j] = c[j] + 0.8*float32(r.NormFloat64())
		}
		out[i] = v
	}
	return out
}

// build indexes vs as documents 0..len(vs)-1 in the vector index and the graph.
func build(tb testing.TB, vs [][]float32, p Params) (*vector.Index, *Graph) {
	tb.Helper()
	vi := vector.New(len(vs[0]))
	g := New(len(vs[0]), p)
	for d, v := range vs {
		if err := vi.Set(uint32(d), v); err != nil {
			tb.Fatal(err)
		}
		if err := g.Insert(uint32(d), vi); err != nil {
			tb.Fatal(err)
		}
	}
	return vi, g
}

// bruteForce is the reference: exact float32 cosine over the allowed live
// documents, best first, ties by lower doc.
func bruteForce(vi *vector.Index, q []float32, allow *docset.Set, k int) []vector.Hit {
	var docs []uint32
	for d := range vi.Docs() {
		if allow.Has(d) {
			docs = append(docs, d)
		}
	}
	return vi.Rescore(q, docs, k)
}

func docsOf(hs []vector.Hit) []uint32 {
	out := make([]uint32, len(hs))
	for i, h := range hs {
		out[i] = h.Doc
	}
	return out
}

// TestExhaustiveSmall: with at most 2·M nodes layer 0 is complete and ef
// covers every node, so the graph path must return exactly brute force, for
// every size, filter and pattern of deletions tried.
func TestExhaustiveSmall(t *testing.T) {
	pol := Policy{ExactBelow: -1, Ef: 64}
	for n := 1; n <= 32; n++ {
		vs := clustered(uint64(n), n, 24, 3)
		vi, g := build(t, vs, Params{M: 16})
		r := rand.New(rand.NewPCG(uint64(n), 1))
		for round := range 12 {
			if round%3 == 2 && vi.Len() > 1 { // delete or re-insert one
				d := uint32(r.IntN(n))
				if vi.Has(d) {
					g.Delete(d, vi)
					vi.Remove(d)
				} else {
					if err := vi.Set(d, vs[(int(d)+round)%n]); err != nil {
						t.Fatal(err)
					}
					if err := g.Insert(d, vi); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := g.Check(vi, vi.Len()); err != nil {
				t.Fatal(err)
			}
			var allow *docset.Set
			if round%2 == 1 {
				allow = &docset.Set{}
				for d := range n {
					if r.IntN(3) == 0 {
						allow.Add(uint32(d))
					}
				}
			}
			q := clustered(uint64(1000+round), 1, 24, 3)[0]
			for _, k := range []int{1, 3, 10, 40} {
				got, path := SearchVectors(g, vi, q, allow, k, pol)
				want := bruteForce(vi, q, allow, k)
				if !slices.Equal(docsOf(got), docsOf(want)) {
					t.Fatalf("n=%d round %d k=%d (path %d): got %v, want %v", n, round, k, path, docsOf(got), docsOf(want))
				}
			}
		}
	}
}

// synthVectors embeds the texts of n synthetic memories and, as queries,
// queries short search queries and as many unseen memories' texts.
func synthVectors(n, dim, queries int) (docs, qs [][]float32) {
	c := synth.New(synth.Config{Seed: 11, Dim: dim})
	for i := range n {
		m := c.Memory(i)
		docs = append(docs, c.Vector(m.Name+" "+m.Description+" "+m.Text))
	}
	for i := range queries {
		if i%2 == 0 {
			q, _ := c.Query(i+1, n)
			qs = append(qs, c.Vector(q))
		} else {
			qs = append(qs, c.Vector(c.Memory(n+i).Text))
		}
	}
	return docs, qs
}

// TestRecallPerSelectivity measures recall@10 of SearchVectors against brute
// force at 100%, 10%, 1% and 0.1% of the documents allowed (random
// allow-lists), with the exact threshold scaled down to the test's size
// (ExactBelow 300 of 12k is 20k of 800k; ef 64), and asserts a floor per
// selectivity. Where the policy walks the graph, it must be the graph that
// answered (else the floor would test the exact scan).
func TestRecallPerSelectivity(t *testing.T) {
	n, queries := 12000, 100
	if testing.Short() {
		n, queries = 4000, 40
	}
	docs, qs := synthVectors(n, 64, queries)
	vi, g := build(t, docs, Params{})
	// ExactBelow and ef scaled down with the store (the defaults are 20k and
	// 256): at ef 256 a 10% filter of 4k documents is rightly left to the
	// exact scan, since the walk would score more than the 400 allowed.
	pol := Policy{ExactBelow: n / 40, Ef: 64, FilteredExactBelow: -1} // the walk under filters
	for _, c := range []struct {
		sel, floor float64
		graph      bool // the graph must answer most queries
	}{{1, 0.95, true}, {0.1, 0.95, true}, {0.01, 1, false}, {0.001, 1, false}} {
		r := rand.New(rand.NewPCG(uint64(c.sel*1e6), 2))
		var allow *docset.Set
		if c.sel < 1 {
			allow = &docset.Set{}
			for d := range n {
				if r.Float64() < c.sel {
					allow.Add(uint32(d))
				}
			}
		}
		hit, total := 0, 0
		paths := map[Path]int{}
		for _, q := range qs {
			got, path := SearchVectors(g, vi, q, allow, 10, pol)
			paths[path]++
			want := bruteForce(vi, q, allow, 10)
			total += len(want)
			for _, w := range want {
				if slices.Contains(docsOf(got), w.Doc) {
					hit++
				}
			}
		}
		recall := float64(hit) / float64(max(total, 1))
		t.Logf("selectivity %5.1f%%: recall@10 %.4f over %d queries; graph %d, fallback %d, exact %d",
			c.sel*100, recall, queries, paths[PathGraph], paths[PathFallback], paths[PathExact])
		if recall < c.floor {
			t.Errorf("selectivity %v: recall@10 %.4f, want ≥ %v", c.sel, recall, c.floor)
		}
		// A walk over a filter of a few hundred scores more nodes than it
		// allows and rightly falls back (the -short size's 10%).
		if c.graph && n*int(c.sel*1000) >= 1000*1000 && paths[PathGraph] < queries*9/10 {
			t.Errorf("selectivity %v: graph answered only %d of %d queries", c.sel, paths[PathGraph], queries)
		}
	}
}

// TestTinyScopeGetsAll: a 5-document filter inside a large graph returns all
// 5, whether the policy scans exactly or the walk is forced and falls back.
func TestTinyScopeGetsAll(t *testing.T) {
	vs := clustered(5, 3000, 32, 10)
	vi, g := build(t, vs, Params{})
	allow := &docset.Set{}
	for _, d := range []uint32{7, 700, 1400, 2100, 2999} {
		allow.Add(d)
	}
	for _, pol := range []Policy{{}, {ExactBelow: -1}} {
		got, path := SearchVectors(g, vi, vs[0], allow, 10, pol)
		if len(got) != 5 {
			t.Fatalf("policy %+v (path %d): %d hits, want all 5: %v", pol, path, len(got), docsOf(got))
		}
	}
}

// TestTombstones: after deleting most documents, the graph never returns a
// deleted one and still finds the nearest live ones.
func TestTombstones(t *testing.T) {
	n := 4000
	vs := clustered(9, n, 32, 8)
	vi, g := build(t, vs, Params{})
	r := rand.New(rand.NewPCG(9, 9))
	for d := range n {
		if r.IntN(4) != 0 {
			g.Delete(uint32(d), vi)
			vi.Remove(uint32(d))
		}
	}
	if g.Len() != vi.Len() || g.Dead() != n-vi.Len() {
		t.Fatalf("live %d dead %d, vector index %d", g.Len(), g.Dead(), vi.Len())
	}
	hit, total := 0, 0
	for i, q := range clustered(10, 50, 32, 8) {
		got, _ := SearchVectors(g, vi, q, nil, 10, Policy{ExactBelow: -1})
		for _, h := range got {
			if !vi.Has(h.Doc) {
				t.Fatalf("query %d: deleted document %d returned", i, h.Doc)
			}
		}
		want := bruteForce(vi, q, nil, 10)
		total += len(want)
		for _, w := range want {
			if slices.Contains(docsOf(got), w.Doc) {
				hit++
			}
		}
	}
	if recall := float64(hit) / float64(total); recall < 0.95 {
		t.Errorf("recall@10 with 75%% tombstones: %.3f, want ≥ 0.95", recall)
	}
}

func snapshotBytes(tb testing.TB, g *Graph) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w := binenc.NewWriter(&buf)
	g.WriteSnapshot(w)
	if err := w.Finish(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func readBytes(b []byte) (*Graph, error) {
	r := binenc.NewReader(bytes.NewReader(b), int64(len(b)))
	g, err := ReadSnapshot(r, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	if err := r.Verify(); err != nil {
		return nil, err
	}
	return g, nil
}

// TestSnapshotRoundTrip: a read-back graph answers every search exactly as
// the written one, tombstones included, and rejects a vector index it does
// not cover.
func TestSnapshotRoundTrip(t *testing.T) {
	vs := clustered(3, 1500, 16, 6)
	vi, g := build(t, vs, Params{M: 8})
	for d := uint32(0); d < 1500; d += 7 {
		g.Delete(d, vi)
		vi.Remove(d)
	}
	b := snapshotBytes(t, g)
	g2, err := readBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := g2.Check(vi, vi.Len()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(snapshotBytes(t, g2), b) {
		t.Fatal("snapshot of the read-back graph differs")
	}
	for i, q := range clustered(4, 20, 16, 6) {
		a, _ := SearchVectors(g, vi, q, nil, 10, Policy{ExactBelow: -1})
		c, _ := SearchVectors(g2, vi, q, nil, 10, Policy{ExactBelow: -1})
		if !slices.Equal(docsOf(a), docsOf(c)) {
			t.Fatalf("query %d: %v after reading, %v before", i, docsOf(c), docsOf(a))
		}
	}
	vi.Remove(1)
	if err := g2.Check(vi, vi.Len()); err == nil {
		t.Fatal("Check accepted a vector index missing a document")
	}
	for _, cut := range []int{0, 1, 10, len(b) / 2, len(b) - 1} {
		if _, err := readBytes(b[:cut]); err == nil {
			t.Fatalf("truncated to %d bytes: accepted", cut)
		}
	}
}

// FuzzReadSnapshot: the decoder never panics, and a graph it accepts can be
// searched and written again.
func FuzzReadSnapshot(f *testing.F) {
	for _, n := range []int{1, 5, 60} {
		vs := clustered(uint64(n), n, 8, 2)
		vi, g := build(f, vs, Params{M: 4})
		g.Delete(0, vi)
		vi.Remove(0)
		f.Add(snapshotBytes(f, g))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := binenc.NewReader(bytes.NewReader(b), int64(len(b)))
		g, err := ReadSnapshot(r, len(b)) // as the index bounds them: by its input
		if err != nil {
			return
		}
		// Search against a source with every document of the right dimension.
		src := fullSource{dim: g.Dim()}
		q := make([]int16, g.Dim())
		q[0] = 1
		g.Search(src, Query{Codes: q, Scale: 1, K: 3, Ef: 8})
		allow := &docset.Set{}
		allow.Add(1)
		g.Search(src, Query{Codes: q, Scale: 1, Allow: allow, Allowed: 1, K: 3, Ef: 8})
		snapshotBytes(t, g)
	})
}

// fullSource has a vector, all ones, for every document.
type fullSource struct{ dim int }

func (s fullSource) Code(uint32) ([]int8, float32, bool) {
	c := make([]int8, s.dim)
	for i := range c {
		c[i] = 1
	}
	return c, 1, true
}

func BenchmarkSearch(b *testing.B) {
	for _, dim := range []int{384, 512} {
		for _, n := range []int{20000} {
			vs := clustered(1, n, dim, 50)
			vi, g := build(b, vs, Params{})
			qs := clustered(2, 64, dim, 50)
			for _, c := range []struct {
				name string
				pol  Policy
			}{{"graph", Policy{ExactBelow: -1}}, {"exact", Policy{ExactBelow: n}}} {
				b.Run(fmt.Sprintf("dim=%d/n=%d/%s", dim, n, c.name), func(b *testing.B) {
					b.ReportAllocs()
					i := 0
					for b.Loop() {
						SearchVectors(g, vi, qs[i%len(qs)], nil, 10, c.pol)
						i++
					}
				})
			}
		}
	}
}

func BenchmarkInsert(b *testing.B) {
	for _, dim := range []int{384, 512} {
		vs := clustered(1, 10000, dim, 50)
		b.Run(fmt.Sprintf("dim=%d/n=10k", dim), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				build(b, vs, Params{})
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(vs)), "µs/insert")
		})
	}
}

// TestInsertBatch: a graph built by InsertBatch on several goroutines, with
// some documents already present (re-inserted), covers exactly its documents
// and reaches the serial build's recall floor.
func TestInsertBatch(t *testing.T) {
	n, queries := 8000, 60
	if testing.Short() {
		n, queries = 3000, 30
	}
	docs, qs := synthVectors(n, 64, queries)
	vi := vector.New(64)
	ids := make([]uint32, n)
	for d, v := range docs {
		if err := vi.Set(uint32(d), v); err != nil {
			t.Fatal(err)
		}
		ids[d] = uint32(d)
	}
	g := New(64, Params{})
	if err := g.InsertBatch(ids[:n/2], vi, 3); err != nil {
		t.Fatal(err)
	}
	if err := g.InsertBatch(ids[n/4:], vi, 3); err != nil { // a quarter again
		t.Fatal(err)
	}
	if err := g.Check(vi, vi.Len()); err != nil {
		t.Fatal(err)
	}
	if g.Dead() != n/4 {
		t.Fatalf("%d tombstones, want %d", g.Dead(), n/4)
	}
	hit, total := 0, 0
	for _, q := range qs {
		got, path := SearchVectors(g, vi, q, nil, 10, Policy{ExactBelow: -1})
		if path != PathGraph {
			t.Fatalf("path %d", path)
		}
		want := bruteForce(vi, q, nil, 10)
		total += len(want)
		for _, w := range want {
			if slices.Contains(docsOf(got), w.Doc) {
				hit++
			}
		}
	}
	if recall := float64(hit) / float64(total); recall < 0.95 {
		t.Fatalf("recall@10 %.4f, want ≥ 0.95", recall)
	}
	var noVec vector.Index
	if err := g.InsertBatch([]uint32{5}, &noVec, 2); err == nil {
		t.Fatal("InsertBatch accepted a document without a vector")
	}
}

// TestPreciseQuery: the finely quantised query's integer cosine against a
// row's codes matches the float64 dot product of the query and the codes'
// decoded vector to within the query's rounding (half a step a component),
// for random and extreme vectors of several dimensions, and never overflows
// the kernel's int32 sums (all components at the maximum).
func TestPreciseQuery(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for _, dim := range []int{1, 7, 16, 384, 512, 1536, 4096} {
		for round := range 20 {
			q := make([]float32, dim)
			for i := range q {
				switch round {
				case 0:
					q[i] = 1 // every component at the maximum
				case 1:
					q[i] = float32(1 - 2*(i%2))
				default:
					q[i] = float32(r.NormFloat64())
				}
			}
			qn, ok := vector.Normalize(q)
			if !ok {
				t.Fatal("normalise")
			}
			pq := preciseQuery(qn)
			vi := vector.New(dim)
			v := make([]float32, dim)
			for i := range v {
				v[i] = float32(r.NormFloat64())
				if round == 0 {
					v[i] = 1
				}
			}
			if err := vi.Set(0, v); err != nil {
				t.Fatal(err)
			}
			c, s, _ := vi.Code(0)
			var want, qerr float64
			for i := range c {
				want += float64(qn[i]) * float64(s) * float64(c[i])
				qerr += math.Abs(float64(s)*float64(c[i])) * float64(pq.scale) / 2
			}
			got := float64(pq.scale) * float64(s) * float64(vector.DotInt8(pq.codes, c))
			if math.Abs(got-want) > qerr+1e-5 {
				t.Fatalf("dim %d round %d: integer cosine %v, float %v (allowed error %v)", dim, round, got, want, qerr)
			}
		}
	}
	if q := preciseQuery(make([]float32, 8)); q.scale != 0 {
		t.Fatalf("zero vector: scale %v", q.scale)
	}
}

// TestRescoreCut: with ef above the store's size the walk reaches every node,
// so the only approximation left is the two-stage rescore (the best
// max(4k, 40) by int8 cosine rescored in float32): it must still return
// exactly brute force's hits, cosines and order.
func TestRescoreCut(t *testing.T) {
	n := 3000
	docs, qs := synthVectors(n, 64, 60)
	vi, g := build(t, docs, Params{M: 8})
	for i, q := range qs {
		for _, k := range []int{1, 10, 25} {
			got, path := SearchVectors(g, vi, q, nil, k, Policy{ExactBelow: -1, Ef: 2 * n})
			if want := bruteForce(vi, q, nil, k); path != PathGraph || !slices.Equal(got, want) {
				t.Fatalf("query %d k %d (path %d):\n got %v\nwant %v", i, k, path, got, want)
			}
		}
	}
}

// TestPolicyExact: which searches the policy leaves to the exact scan.
func TestPolicyExact(t *testing.T) {
	for _, c := range []struct {
		name              string
		p                 Policy
		live, allowed     int
		filtered, exactly bool
	}{
		{"small store", Policy{}, 15_000, 15_000, false, true},
		{"large store, no filter", Policy{}, 1_000_000, 1_000_000, false, false},
		{"filter under ExactBelow", Policy{}, 1_000_000, 20_000, true, true},
		{"1M, 10% allowed", Policy{}, 1_000_000, 100_000, true, true},
		{"1M, 20% allowed", Policy{}, 1_000_000, 200_000, true, false},
		{"300k, 10% allowed", Policy{}, 300_000, 30_000, true, true},
		{"300k, 20% allowed: over 1/8", Policy{}, 300_000, 60_000, true, false},
		{"100k unfiltered over ExactBelow", Policy{}, 100_000, 100_000, false, false},
		{"filtered rule off", Policy{FilteredExactBelow: -1}, 1_000_000, 100_000, true, false},
		{"always the graph", Policy{ExactBelow: -1}, 1_000_000, 10, true, false},
		{"own thresholds", Policy{ExactBelow: 10, FilteredExactBelow: 50}, 1000, 50, true, true},
		{"own thresholds, over", Policy{ExactBelow: 10, FilteredExactBelow: 50}, 1000, 51, true, false},
	} {
		if got := c.p.exact(c.live, c.allowed, c.filtered); got != c.exactly {
			t.Errorf("%s: exact %v, want %v", c.name, got, c.exactly)
		}
	}
}

func TestEfFor(t *testing.T) {
	for _, c := range []struct{ live, ef int }{
		{0, DefaultEf}, {100_000, DefaultEf}, {250_000, DefaultEf}, {1_000_000, 1024}, {4_000_000, 2048},
	} {
		if got := efFor(c.live); got != c.ef {
			t.Errorf("efFor(%d) = %d, want %d", c.live, got, c.ef)
		}
	}
}
