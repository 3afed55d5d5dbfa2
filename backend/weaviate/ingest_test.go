package weaviate

import (
	"cmp"
	"context"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/internal/synth"
	"github.com/engram-memory/engram/memory"
)

// TestIngest measures ingest through gRPC batches with pre-computed vectors;
// it is not part of the default run. For example:
//
//	ENGRAM_WEAVIATE_INGEST=100000 go test -run TestIngest -v -timeout 1h ./backend/weaviate
//
// The memories are engram bench's synthetic ones (internal/synth: topics,
// a Zipf vocabulary, 384-d vectors summed from word vectors, so that
// neighbours mean something; on uniform noise every approximate index's
// recall collapses: 0.244 at 100k with Weaviate's defaults), put 1,000 per
// Put call (the store sends them in batches of
// Config.BatchSize); the rate is over the whole run, the last 10% (the
// last put at least) reported apart so that a rate that falls with the class's size shows. Then the
// vector leg's recall@10 against an exact scan of the same vectors, over 50
// queries: what the index's build parameters trade for speed; and the time
// of Backend.Models' count over the class.
// ENGRAM_WEAVIATE_INGEST_URL_PARAMS sets the store URL's parameters for the
// run (ParseURL's: for example ef_construction=64&max_connections=16 or
// quantizer=bq).
func TestIngest(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ENGRAM_WEAVIATE_INGEST"))
	if n <= 0 {
		t.Skip("set ENGRAM_WEAVIATE_INGEST=100000 to measure")
	}
	const dim, perPut = 384, 1000
	// The URL's parameters as ParseURL reads them (the host is the test
	// server's, not this one); zero fields keep the defaults.
	var params Config
	if p := os.Getenv("ENGRAM_WEAVIATE_INGEST_URL_PARAMS"); p != "" {
		var err error
		if params, err = ParseURL("weaviate://127.0.0.1:1?" + p); err != nil {
			t.Fatal(err)
		}
	}
	s := openTest(t, func(c *Config) {
		c.Timeout = time.Minute
		c.VectorIndex, c.EfConstruction, c.MaxConnections, c.Quantizer, c.BatchSize = params.VectorIndex, params.EfConstruction, params.MaxConnections, params.Quantizer, params.BatchSize
	})
	t.Cleanup(func() { s.Drop(ctxT(t)) })
	corpus := synth.New(synth.Config{Seed: 1, Dim: dim})
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	vecs := make([][]float32, 0, n) // normalised, as the leg compares them
	start := time.Now()
	var tail time.Time // the start of the puts that write the last 10% (the last put, at least)
	tailFrom := 0
	for done := 0; done < n; done += perPut {
		if tail.IsZero() && (done >= n*9/10 || done+perPut >= n) {
			tail, tailFrom = time.Now(), done
		}
		mems := make([]*memory.Memory, min(perPut, n-done))
		for i := range mems {
			text := corpus.Memory(done + i).Text
			v := unit(corpus.Vector(text))
			vecs = append(vecs, v)
			mems[i] = mem("m"+strconv.Itoa(done+i), text, func(m *memory.Memory) {
				m.Embedding = &memory.Embedding{Model: "bench", Dim: dim, Vector: v}
			})
		}
		if err := s.Put(ctx, mems); err != nil {
			t.Fatalf("put %d..: %v", done, err)
		}
	}
	total := time.Since(start)
	t.Logf("%d memories (%d-d vectors) in %s: %.0f/s; the last %d: %.0f/s (batches of %d over gRPC)",
		n, dim, total.Round(time.Millisecond), float64(n)/total.Seconds(),
		n-tailFrom, float64(n-tailFrom)/time.Since(tail).Seconds(), s.cfg.BatchSize)

	const queries, k = 50, 10
	var found int
	var took []time.Duration
	for i := range queries {
		text, _ := corpus.Query(i, n)
		q := unit(corpus.Vector(text))
		t0 := time.Now()
		res, err := (&Backend{s: s}).Legs(ctx, backend.LegQuery{K: k, Vector: q, Model: "bench"})
		took = append(took, time.Since(t0))
		if err != nil {
			t.Fatal(err)
		}
		exact := make([]int, len(vecs))
		for i := range exact {
			exact[i] = i
		}
		dot := func(i int) (d float32) {
			for j, x := range vecs[i] {
				d += x * q[j]
			}
			return d
		}
		scores := make([]float32, len(vecs))
		for i := range vecs {
			scores[i] = dot(i)
		}
		slices.SortFunc(exact, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
		want := map[string]bool{}
		for _, i := range exact[:k] {
			want["m"+strconv.Itoa(i)] = true
		}
		for _, h := range res.Vector {
			if want[h.Memory.ID] {
				found++
			}
		}
	}
	slices.Sort(took)
	t.Logf("vector leg recall@%d against an exact scan: %.3f, p50 %.2f ms (%d queries; index %s, ef_construction %d, max_connections %d, quantizer %q; 0 or none given: Weaviate's)",
		k, float64(found)/float64(queries*k), float64(took[len(took)/2].Microseconds())/1000, queries, s.cfg.VectorIndex, s.cfg.EfConstruction, s.cfg.MaxConnections, s.cfg.Quantizer)
	// What Backend.Models costs a search that must count (docs/weaviate.md):
	// the aggregate over every memory, median of 21.
	var counts []time.Duration
	for range 21 {
		t0 := time.Now()
		if _, err := (&Backend{s: s}).countModels(ctx); err != nil {
			t.Fatal(err)
		}
		counts = append(counts, time.Since(t0))
	}
	slices.Sort(counts)
	t.Logf("Models' count of %d memories: median %.1f ms, fastest %.1f ms (21 counts)", n, float64(counts[10].Microseconds())/1000, float64(counts[0].Microseconds())/1000)
}

// unit returns v scaled to length 1.
func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / math.Sqrt(n))
	}
	return out
}
