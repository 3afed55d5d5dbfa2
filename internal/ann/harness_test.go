package ann

// A recall and speed harness at bench scale, off by default: set
// ENGRAM_ANN_N (e.g. 100000) to build a graph over that many synthetic
// 512-d memories (internal/synth, the corpus engram bench ingests) and
// measure recall@10 of SearchVectors against the exact scan, per
// selectivity (every 10th, 100th, 1000th document allowed, as the bench's
// tags do), with per-search latency. Vectors are cached under the temp
// directory between runs. ENGRAM_ANN_EF lists the efs to try (default the
// policy's). ENGRAM_ANN_SKETCH builds no graph and measures the sign-sketch
// scan instead, at each listed candidate count (0: the policy's).
//
//	ENGRAM_ANN_N=100000 go test -run TestHarness -v -timeout 30m ./internal/ann
//	ENGRAM_ANN_N=1000000 ENGRAM_ANN_SKETCH=0,2000 go test -run 'TestHarness$' -v ./internal/ann

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/docset"
	"github.com/engram-memory/engram/internal/synth"
	"github.com/engram-memory/engram/internal/vector"
)

func harnessVectors(tb testing.TB, n, dim, queries int) (docs []float32, qs [][]float32) {
	c := synth.New(synth.Config{Seed: synth.DefaultSeed, Dim: dim})
	path := filepath.Join(os.TempDir(), fmt.Sprintf("engram-ann-harness-%d-%d.f32", n, dim))
	if b, err := os.ReadFile(path); err == nil && len(b) == n*dim*4 {
		docs = make([]float32, n*dim)
		for i := range docs {
			docs[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	} else {
		docs = make([]float32, 0, n*dim)
		for i := range n {
			docs = append(docs, c.Vector(c.Memory(i).EmbedText())...)
		}
		b := make([]byte, 4*len(docs))
		for i, x := range docs {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			tb.Logf("cache: %v", err)
		}
	}
	for i := range queries {
		text, _ := c.Query(i+1, n)
		if v := c.Vector(text); v != nil {
			qs = append(qs, v)
		}
	}
	return docs, qs
}

func TestHarness(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ENGRAM_ANN_N"))
	if n == 0 {
		t.Skip("set ENGRAM_ANN_N to run")
	}
	const dim, queries = 512, 100
	t0 := time.Now()
	flat, qs := harnessVectors(t, n, dim, queries)
	vi := vector.New(dim)
	vi.Reserve(n)
	ids := make([]uint32, n)
	for d := range n {
		if err := vi.Set(uint32(d), flat[d*dim:(d+1)*dim]); err != nil {
			t.Fatal(err)
		}
		ids[d] = uint32(d)
	}
	flat = nil
	t.Logf("vectors: %s", time.Since(t0).Round(time.Millisecond))
	if os.Getenv("ENGRAM_ANN_BRUTE") != "" {
		// Diagnostic: the int8 brute-force top r (precise query), rescored:
		// how many int8 candidates the float32 rescoring needs. "only" stops
		// here, before the graph is built.
		for _, r := range []int{10, 20, 40, 100, 512} {
			hit := 0
			for _, q := range qs {
				want := docsOf(vi.Search(q, nil, 10))
				qn, _ := vector.Normalize(q)
				pq := preciseQuery(qn)
				var h minHeap
				for d := range n {
					c, sc, _ := vi.Code(uint32(d))
					h.offer(cand{uint32(d), pq.scale * sc * float32(vector.DotInt8(pq.codes, c))}, r)
				}
				var docs []uint32
				for _, c := range h {
					docs = append(docs, c.node)
				}
				got := docsOf(vi.Rescore(q, docs, 10))
				for _, w := range want {
					if slices.Contains(got, w) {
						hit++
					}
				}
			}
			t.Logf("brute int8 top %d rescored: recall@10 %.4f", r, float64(hit)/float64(10*len(qs)))
		}
		if os.Getenv("ENGRAM_ANN_BRUTE") == "only" {
			return
		}
	}
	p := Params{}
	if v, _ := strconv.Atoi(os.Getenv("ENGRAM_ANN_EFC")); v > 0 {
		p.EfConstruction = v
	}
	if v, _ := strconv.Atoi(os.Getenv("ENGRAM_ANN_M")); v > 0 {
		p.M = v
	}
	if v, _ := strconv.Atoi(os.Getenv("ENGRAM_ANN_SEEDBEAM")); v > 0 {
		seedBeam = v
	}
	if v, err := strconv.ParseFloat(os.Getenv("ENGRAM_ANN_ALPHA"), 32); err == nil {
		pruneAlpha = float32(v)
	}
	if v, _ := strconv.Atoi(os.Getenv("ENGRAM_ANN_SLACK")); v > 0 {
		overflowSlack = v
	}
	t.Logf("seedBeam %d alpha %v slack %d", seedBeam, pruneAlpha, overflowSlack)
	sketch := os.Getenv("ENGRAM_ANN_SKETCH") != ""
	var cands []int
	if sketch {
		for _, f := range strings.Split(os.Getenv("ENGRAM_ANN_SKETCH"), ",") {
			v, _ := strconv.Atoi(f)
			cands = append(cands, v) // 0: the policy's
		}
	}
	g := New(dim, p)
	gpath := filepath.Join(os.TempDir(), fmt.Sprintf("engram-ann-harness-%d-M%d-efc%d-%s.graph", n, g.p.M, g.p.EfConstruction, os.Getenv("ENGRAM_ANN_TAG")))
	if sketch {
		g = nil
		t.Logf("no graph: sketch scans, candidates %v", cands)
	} else if b, err := os.ReadFile(gpath); err == nil {
		if g, err = readBytes(b); err != nil {
			t.Fatal(err)
		}
		t.Logf("graph read from %s", gpath)
	} else {
		t0 = time.Now()
		c0 := cpuTime()
		const chunk = 8192
		for lo := 0; lo < n; lo += chunk {
			if err := g.InsertBatch(ids[lo:min(lo+chunk, n)], vi, runtime.GOMAXPROCS(0)); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("graph build %d (M %d, efc %d): %s wall, %s CPU", n, g.p.M, g.p.EfConstruction, time.Since(t0).Round(time.Millisecond), (cpuTime() - c0).Round(time.Millisecond))
		if os.Getenv("ENGRAM_ANN_TAG") != "" {
			_ = os.WriteFile(gpath, snapshotBytes(t, g), 0o600)
		}
	}
	if g != nil {
		var deg int
		for i := range g.cnt0 {
			deg += int(g.cnt0[i])
		}
		t.Logf("layer-0 mean degree %.1f of %d", float64(deg)/float64(n), g.m0)
	}

	efs := []int{DefaultEf}
	if s := os.Getenv("ENGRAM_ANN_EF"); s != "" {
		efs = nil
		for _, f := range strings.Split(s, ",") {
			v, _ := strconv.Atoi(f)
			efs = append(efs, v)
		}
	}
	exactBelow := 0
	if v, err := strconv.Atoi(os.Getenv("ENGRAM_ANN_EXACT_BELOW")); err == nil {
		exactBelow = v
	}
	rescoreAll = os.Getenv("ENGRAM_ANN_RESCORE_ALL") != ""
	if v, _ := strconv.Atoi(os.Getenv("ENGRAM_ANN_RESCORE")); v > 0 {
		rescoreMin = v
	}
	t.Logf("rescore all %v, min %d", rescoreAll, rescoreMin)
	sels := []int{1, 10, 100, 1000}
	if s := os.Getenv("ENGRAM_ANN_SELS"); s != "" {
		sels = nil
		for _, f := range strings.Split(s, ",") {
			v, _ := strconv.Atoi(f)
			sels = append(sels, v)
		}
	}
	for _, every := range sels {
		var allow *docset.Set
		if every > 1 {
			allow = &docset.Set{}
			for d := 0; d < n; d += every {
				allow.Add(uint32(d))
			}
		}
		want := make([][]uint32, len(qs))
		var exactMS []float64
		for i, q := range qs {
			t0 := time.Now()
			want[i] = docsOf(vi.Search(q, allow, 10))
			exactMS = append(exactMS, ms(time.Since(t0)))
		}
		runs := efs
		if sketch {
			runs = cands
		}
		for _, ef := range runs {
			pol := Policy{Ef: ef, ExactBelow: exactBelow}
			if sketch {
				pol = Policy{Cands: ef, ExactBelow: exactBelow}
			}
			if rep, _ := strconv.Atoi(os.Getenv("ENGRAM_ANN_REPEAT")); rep > 0 {
				best := math.Inf(1)
				for range rep {
					t0 := time.Now()
					for _, q := range qs {
						SearchVectors(g, vi, q, allow, 10, pol)
					}
					best = min(best, ms(time.Since(t0))/float64(len(qs)))
				}
				t.Logf("repeat: best round %.3f ms a search", best)
			}
			hit, total := 0, 0
			var lat []float64
			paths := map[Path]int{}
			c0 := cpuTime()
			for i, q := range qs {
				t0 := time.Now()
				got, path := SearchVectors(g, vi, q, allow, 10, pol)
				lat = append(lat, ms(time.Since(t0)))
				paths[path]++
				total += len(want[i])
				for _, w := range want[i] {
					if slices.Contains(docsOf(got), w) {
						hit++
					}
				}
			}
			cpu := ms(cpuTime()-c0) / float64(len(qs))
			t.Logf("sel 1/%-4d ef/cands %4d: recall@10 %.4f  p50 %.3f ms p90 %.3f ms cpu/q %.3f ms (exact p50 %.3f ms)  graph %d fallback %d exact %d sketch %d",
				every, ef, float64(hit)/float64(total), pct(lat, 50), pct(lat, 90), cpu, pct(exactMS, 50),
				paths[PathGraph], paths[PathFallback], paths[PathExact], paths[PathSketch])
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

func pct(xs []float64, p int) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

// TestHarnessExactCost times the exact scan of a 10% filter over
// ENGRAM_ANN_EXACT_N random 512-d vectors (the cost the policy weighs
// against a filtered walk at that size).
func TestHarnessExactCost(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ENGRAM_ANN_EXACT_N"))
	if n == 0 {
		t.Skip("set ENGRAM_ANN_EXACT_N to run")
	}
	const dim = 512
	r := rand.New(rand.NewPCG(1, 1))
	vi := vector.New(dim)
	vi.Reserve(n)
	v := make([]float32, dim)
	for d := range n {
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		if err := vi.Set(uint32(d), v); err != nil {
			t.Fatal(err)
		}
	}
	for _, every := range []int{1, 5, 10, 20} {
		allow := &docset.Set{}
		for d := 0; d < n; d += every {
			allow.Add(uint32(d))
		}
		if every == 1 {
			allow = nil
		}
		var lat []float64
		for range 30 {
			for i := range v {
				v[i] = float32(r.NormFloat64())
			}
			t0 := time.Now()
			vi.Search(v, allow, 10)
			lat = append(lat, ms(time.Since(t0)))
		}
		t.Logf("n %d, 1/%d allowed (%d): exact p50 %.3f ms, min %.3f ms", n, every, n/every, pct(lat, 50), pct(lat, 0))
	}
}
