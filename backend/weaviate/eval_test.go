package weaviate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	pb "github.com/weaviate/weaviate/grpc/generated/protocol/v1"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/embed/glove"
	"github.com/engram-memory/engram/internal/eval"
	"github.com/engram-memory/engram/internal/fusion"
	"github.com/engram-memory/engram/internal/weaviatetest"
	"github.com/engram-memory/engram/memory"
)

// TestEval measures retrieval quality, search latency and ingest rate
// through Weaviate on the real benchmarks; it is not part of the default
// run. For example:
//
//	ENGRAM_WEAVIATE_EVAL=scifact,locomo ENGRAM_DATA=/work/shared/data \
//	    go test -run TestEval -v -timeout 2h ./backend/weaviate
//
// Vectors come from the built-in GloVe embedder with the weight and fusion
// Engram defaults to for it (0.1, rsf). ENGRAM_WEAVIATE_EVAL_INDEX=flat
// measures the exact vector index instead of HNSW; ENGRAM_WEAVIATE_EVAL_LIMIT
// sets the results asked of each search (default 100, as engram eval);
// ENGRAM_WEAVIATE_EVAL_KEEP=Name keeps the last corpus in class Name;
// ENGRAM_WEAVIATE_EVAL_MODES=prefix,prefix runs only the modes whose names
// start so (two modes alone, in turns, time steadier than all). The
// "direct gRPC" modes send the same searches straight to Weaviate (one
// Search call, no Engram in between): the transport's overhead is each
// mode's time over its direct twin's.
func TestEval(t *testing.T) {
	sets := os.Getenv("ENGRAM_WEAVIATE_EVAL")
	if sets == "" {
		t.Skip("set ENGRAM_WEAVIATE_EVAL=scifact,locomo (and ENGRAM_DATA) to measure")
	}
	dir := os.Getenv("ENGRAM_DATA")
	if dir == "" {
		dir = "../../../../shared/data"
	}
	emb, err := glove.Default()
	if err != nil {
		t.Fatal(err)
	}
	base := weaviatetest.URL(t)
	t.Logf("server %s %s; GOMAXPROCS-visible load is the machine's, shared with other work", base, weaviatetest.ServerVersion(t, base))
	for _, name := range strings.Split(sets, ",") {
		var ds *eval.Dataset
		switch name {
		case "scifact":
			ds, err = eval.LoadBEIR(filepath.Join(dir, "scifact"), "test")
		case "locomo":
			ds, err = eval.LoadLoCoMo(filepath.Join(dir, "locomo", "locomo-dev.json"), eval.DefaultLoCoMoOptions())
		default:
			t.Fatalf("unknown data set %q (scifact, locomo)", name)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) { runEval(t, base, ds, emb) })
	}
}

// evalMode is one way of searching, timed per query.
type evalMode struct {
	name   string
	search func(ctx context.Context, s *Store, q string, qv []float32, limit int) ([]string, error)
}

// Engram's defaults for the built-in model (root package, modelDefaults).
const (
	gloveWeight = 0.1
)

// evalModes are the ways TestEval searches; db is the engine opened on the
// corpus's class (the whole of Engram: DB.Search).
func evalModes(model string, db func() *engram.DB) []evalMode {
	ids := func(hits []Hit) []string {
		out := make([]string, len(hits))
		for i, h := range hits {
			out[i] = h.Memory.ID
		}
		return out
	}
	native := func(fusionName string, explain bool) func(context.Context, *Store, string, []float32, int) ([]string, error) {
		return func(ctx context.Context, s *Store, q string, qv []float32, limit int) ([]string, error) {
			if qv == nil {
				hits, err := s.BM25(ctx, LegQuery{Text: q, K: limit})
				return ids(hits), err
			}
			hits, err := s.Hybrid(ctx, HybridQuery{LegQuery: LegQuery{Text: q, Vector: qv, Model: model, K: limit},
				BM25Weight: 1, VectorWeight: gloveWeight, Fusion: fusionName, Explain: explain})
			out := make([]string, len(hits))
			for i, h := range hits {
				out[i] = h.Memory.ID
			}
			return out, err
		}
	}
	// client is Engram's own fusion over the two Weaviate legs, each
	// max(5×limit, 50) deep as the recall pipeline asks.
	client := func(fuse func([]fusion.Leg) []fusion.Fused) func(context.Context, *Store, string, []float32, int) ([]string, error) {
		return func(ctx context.Context, s *Store, q string, qv []float32, limit int) ([]string, error) {
			pool := max(5*limit, 50)
			var (
				wg        sync.WaitGroup
				bm, vec   []Hit
				bmE, vecE error
				legs      []fusion.Leg
				toFusion  = func(name string, w float64, hs []Hit) fusion.Leg {
					l := fusion.Leg{Name: name, Weight: w}
					for _, h := range hs {
						l.Hits = append(l.Hits, fusion.Hit{ID: h.Memory.ID, Score: h.Score})
					}
					return l
				}
			)
			wg.Add(1)
			go func() { defer wg.Done(); bm, bmE = s.BM25(ctx, LegQuery{Text: q, K: pool, Lean: true}) }()
			if qv != nil {
				wg.Add(1)
				go func() {
					defer wg.Done()
					vec, vecE = s.NearVector(ctx, LegQuery{Vector: qv, Model: model, K: pool, Lean: true})
				}()
			}
			wg.Wait()
			if bmE != nil || vecE != nil {
				return nil, fmt.Errorf("%v %v", bmE, vecE)
			}
			legs = append(legs, toFusion("bm25", 1, bm))
			if qv != nil {
				legs = append(legs, toFusion("vector", gloveWeight, vec))
			}
			fused := fuse(legs)
			out := make([]string, 0, limit)
			for _, f := range fused {
				if len(out) == limit {
					break
				}
				out = append(out, f.ID)
			}
			// The pipeline then reads the results' memories.
			if _, err := s.GetMany(ctx, nil, out, false); err != nil {
				return nil, err
			}
			return out, nil
		}
	}
	return []evalMode{
		{"bm25", func(ctx context.Context, s *Store, q string, _ []float32, limit int) ([]string, error) {
			hits, err := s.BM25(ctx, LegQuery{Text: q, K: limit})
			return ids(hits), err
		}},
		{"vector", func(ctx context.Context, s *Store, _ string, qv []float32, limit int) ([]string, error) {
			if qv == nil {
				return nil, nil
			}
			hits, err := s.NearVector(ctx, LegQuery{Vector: qv, Model: model, K: limit})
			return ids(hits), err
		}},
		{"hybrid-rsf (Engram fusion)", client(fusion.RSF)},
		{"hybrid-rrf (Engram fusion)", client(func(l []fusion.Leg) []fusion.Fused { return fusion.RRF(l, fusion.DefaultK) })},
		{"native-rsf", native(FusionRSF, false)},
		{"native-rrf", native(FusionRRF, false)},
		{"native-rrf + explain legs", native(FusionRRF, true)},
		{"seam native (Hybrid+Complete)", seamNative(model)},
		{"engine hybrid (DB.Search)", engineSearch(db, "")},
		{"engine native (DB.Search)", engineSearch(db, "native")},
		{"direct gRPC bm25", direct(func(s *Store, q string, _ []float32, r *pb.SearchRequest) {
			props, _ := s.searchProperties(nil)
			r.Bm25Search = &pb.BM25{Query: s.keywordQuery(q), Properties: props}
			r.Metadata = &pb.MetadataRequest{Uuid: true, Score: true}
		})},
		{"direct gRPC vector", direct(func(s *Store, _ string, qv []float32, r *pb.SearchRequest) {
			name := VectorName(model, len(qv))
			r.NearVector = &pb.NearVector{Vectors: []*pb.Vectors{queryVector(name, qv)}, Targets: &pb.Targets{TargetVectors: []string{name}}}
			r.Metadata = &pb.MetadataRequest{Uuid: true, Distance: true}
		})},
		{"direct gRPC hybrid + explain", direct(func(s *Store, q string, qv []float32, r *pb.SearchRequest) {
			props, _ := s.searchProperties(nil)
			name := VectorName(model, len(qv))
			alpha := float32(gloveWeight / (1 + gloveWeight))
			r.HybridSearch = &pb.Hybrid{Query: s.keywordQuery(q), Properties: props, Vectors: []*pb.Vectors{queryVector(name, qv)},
				Targets: &pb.Targets{TargetVectors: []string{name}}, AlphaParam: &alpha, UseAlphaParam: true,
				FusionType: pb.Hybrid_FUSION_TYPE_RANKED}
			r.Metadata = &pb.MetadataRequest{Uuid: true, Score: true, ExplainScore: true}
		})},
	}
}

// seamNative is a native hybrid search as the engine makes it through the
// backend seam: Backend.Hybrid (the hybrid call, its explain legs and the
// keyword bound) and Complete of the first 10 hits (the engine completes
// the few it keeps).
func seamNative(model string) func(context.Context, *Store, string, []float32, int) ([]string, error) {
	return func(ctx context.Context, s *Store, q string, qv []float32, limit int) ([]string, error) {
		if qv == nil {
			return nil, nil
		}
		b := &Backend{s: s}
		res, err := b.Hybrid(ctx, backend.HybridQuery{LegQuery: backend.LegQuery{Text: q, Vector: qv, Model: model, K: limit}, BM25Weight: 1, VectorWeight: gloveWeight})
		if err != nil {
			return nil, err
		}
		out := make([]string, len(res.Hits))
		var partial []*memory.Memory
		for i, h := range res.Hits {
			out[i] = h.Memory.ID
			if i < 10 {
				partial = append(partial, h.Memory)
			}
		}
		_, err = b.Complete(ctx, partial)
		return out, err
	}
}

// engineSearch is a search through the whole engine as an agent makes it
// (DB.Search with the store's defaults, the query embedded by the engine,
// no use recorded), with fusion if not "".
func engineSearch(db func() *engram.DB, fusion string) func(context.Context, *Store, string, []float32, int) ([]string, error) {
	return func(ctx context.Context, _ *Store, q string, qv []float32, limit int) ([]string, error) {
		if qv == nil {
			return nil, nil
		}
		res, err := db().Search(ctx, engram.Query{Query: q, Limit: limit, Fusion: fusion, NoRecord: true})
		if err != nil {
			return nil, err
		}
		out := make([]string, len(res.Results))
		for i, r := range res.Results {
			out[i] = r.ID
		}
		return out, nil
	}
}

// direct is a search sent straight to Weaviate: one gRPC Search of the
// store's class that set fills in, returning the memories' properties, and
// nothing of Engram's in between but the reading of their ids.
func direct(set func(s *Store, q string, qv []float32, r *pb.SearchRequest)) func(context.Context, *Store, string, []float32, int) ([]string, error) {
	return func(ctx context.Context, s *Store, q string, qv []float32, limit int) ([]string, error) {
		if qv == nil {
			return nil, nil
		}
		api, err := s.c.rpc.dial()
		if err != nil {
			return nil, err
		}
		r := &pb.SearchRequest{Collection: s.cfg.Class, Limit: uint32(limit), Uses_123Api: true, Uses_125Api: true, Uses_127Api: true,
			Properties: &pb.PropertiesRequest{NonRefProperties: fullProps}}
		set(s, q, qv, r)
		reply, err := api.Search(ctx, r)
		if err != nil {
			return nil, err
		}
		out := make([]string, len(reply.Results))
		for i, res := range reply.Results {
			out[i] = res.GetProperties().GetNonRefProps().GetFields()[pID].GetTextValue()
		}
		return out, nil
	}
}

// pickModes keeps the modes whose names start with one of prefixes, in
// their order; a prefix that names none fails the test.
func pickModes(t *testing.T, modes []evalMode, prefixes []string) []evalMode {
	var out []evalMode
	for _, p := range prefixes {
		if !slices.ContainsFunc(modes, func(m evalMode) bool { return strings.HasPrefix(m.name, p) }) {
			t.Fatalf("ENGRAM_WEAVIATE_EVAL_MODES: no mode starts with %q", p)
		}
	}
	for _, m := range modes {
		if slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(m.name, p) }) {
			out = append(out, m)
		}
	}
	return out
}

type modeStats struct {
	sum   eval.Metrics
	n     int
	times []time.Duration
}

func runEval(t *testing.T, base string, ds *eval.Dataset, emb embed.Embedder) {
	ctx := context.Background()
	var err error
	var db *engram.DB
	modes := evalModes(emb.Model(), func() *engram.DB { return db })
	if v := os.Getenv("ENGRAM_WEAVIATE_EVAL_MODES"); v != "" {
		modes = pickModes(t, modes, strings.Split(v, ","))
	}
	stats := make([]modeStats, len(modes))
	for i := range stats {
		stats[i].sum = eval.Metrics{}
	}
	var ingestDocs int
	var embedDur, putDur time.Duration
	index := os.Getenv("ENGRAM_WEAVIATE_EVAL_INDEX")
	evalLimit := eval.DefaultLimit
	if v := os.Getenv("ENGRAM_WEAVIATE_EVAL_LIMIT"); v != "" {
		if evalLimit, err = strconv.Atoi(v); err != nil {
			t.Fatal(err)
		}
	}
	keep := os.Getenv("ENGRAM_WEAVIATE_EVAL_KEEP")
	for ci, c := range ds.Corpora {
		class := weaviatetest.Class(t, base)
		last := ci == len(ds.Corpora)-1
		if keep != "" && last {
			class = keep
		}
		s, err := Open(ctx, Config{Endpoint: base, GRPCPort: weaviatetest.GRPCPort(t, base), Class: class, VectorIndex: index, Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		docs := make([]*memory.Memory, len(c.Docs))
		for i, d := range c.Docs {
			m := *d
			m.CreatedAt, m.UpdatedAt = now, now
			if err := m.Normalize(); err != nil {
				t.Fatal(err)
			}
			m.ContentHash = m.ComputeHash()
			docs[i] = &m
		}
		t0 := time.Now()
		const batch = 256
		for i := 0; i < len(docs); i += batch {
			part := docs[i:min(i+batch, len(docs))]
			texts := make([]string, len(part))
			for j, m := range part {
				texts[j] = m.EmbedText()
			}
			vecs, err := emb.Embed(ctx, texts)
			if err != nil {
				t.Fatal(err)
			}
			for j, v := range vecs {
				if v != nil {
					part[j].Embedding = &memory.Embedding{Model: emb.Model(), Dim: len(v), Vector: v}
				}
			}
		}
		embedDur += time.Since(t0)
		t1 := time.Now()
		if err := s.Put(ctx, docs); err != nil {
			t.Fatal(err)
		}
		putDur += time.Since(t1)
		ingestDocs += len(docs)

		loc := fmt.Sprintf("weaviate://%s?class=%s&grpc=%d&timeout=1m", strings.TrimPrefix(base, "http://"), class, weaviatetest.GRPCPort(t, base))
		if index != "" {
			loc += "&index=" + index
		}
		if db, err = engram.Open(ctx, loc, engram.Options{Embedder: emb}); err != nil {
			t.Fatal(err)
		}
		qvecs := make([][]float32, len(c.Cases))
		for i, cs := range c.Cases {
			v, err := emb.Embed(ctx, []string{cs.Text})
			if err != nil {
				t.Fatal(err)
			}
			qvecs[i] = v[0]
		}
		for i, cs := range c.Cases { // modes side by side, query by query
			for mi, m := range modes {
				start := time.Now()
				ranked, err := m.search(ctx, s, cs.Text, qvecs[i], evalLimit)
				stats[mi].times = append(stats[mi].times, time.Since(start))
				if err != nil {
					t.Fatalf("%s %q: %v", m.name, cs.Text, err)
				}
				for k, v := range eval.Score(ranked, cs.Gold) {
					stats[mi].sum[k] += v
				}
				stats[mi].n++
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if keep == "" || !last {
			s.Drop(ctx)
		}
		s.Close()
	}
	metrics := ds.Metrics
	if len(metrics) == 0 {
		metrics = eval.AllMetrics
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d corpora, %d docs, %d queries, limit %d; ingest %.0f docs/s (Put alone %.0f docs/s; GloVe embedding %.1fs)\n",
		ds.Name, len(ds.Corpora), ingestDocs, stats[0].n, evalLimit,
		float64(ingestDocs)/(embedDur+putDur).Seconds(), float64(ingestDocs)/putDur.Seconds(), embedDur.Seconds())
	fmt.Fprintf(&b, "%-28s", "mode")
	for _, k := range metrics {
		fmt.Fprintf(&b, " %10s", k)
	}
	fmt.Fprintf(&b, " %9s %9s %9s\n", "p50 ms", "p95 ms", "p99 ms")
	for mi, m := range modes {
		st := stats[mi]
		fmt.Fprintf(&b, "%-28s", m.name)
		for _, k := range metrics {
			fmt.Fprintf(&b, " %10.4f", st.sum[k]/float64(st.n))
		}
		p50, p95, p99 := percentile(st.times, 0.50), percentile(st.times, 0.95), percentile(st.times, 0.99)
		fmt.Fprintf(&b, " %9.2f %9.2f %9.2f\n", ms(p50), ms(p95), ms(p99))
	}
	t.Log("\n" + b.String())
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// percentile is the nearest-rank percentile.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(float64(len(s))*p+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}
