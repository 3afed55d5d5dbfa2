package weaviate

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/engram-memory/engram/memory"
)

// score is Weaviate's BM25 score of one hit, as solveIDF models it.
func score(idf, tf, dl, avgdl, k1, b float64) float64 {
	return idf * tf / (tf + k1*(1-b+b*dl/avgdl))
}

func TestSolveIDF(t *testing.T) {
	const k1, b, avgdl = 1.2, 0.75, 166.3
	hits := func(idf float64, tfdl ...[2]float64) []probeHit {
		var out []probeHit
		for _, p := range tfdl {
			// float32, as the scores come
			out = append(out, probeHit{score: float64(float32(score(idf, p[0], p[1], avgdl, k1, b))), tf: p[0], dl: p[1]})
		}
		return out
	}
	spoilt := hits(1.5, [2]float64{3, 100}, [2]float64{1, 160}, [2]float64{7, 220}, [2]float64{2, 90})
	spoilt[2].score *= 1.01
	tests := []struct {
		name string
		hits []probeHit
		k1   float64
		b    float64
		want float64 // 0: not solvable
	}{
		{"four hits", hits(1.848305, [2]float64{10, 165}, [2]float64{12, 166}, [2]float64{7, 158}, [2]float64{7, 222}), k1, b, 1.848305},
		{"two hits", hits(0.72, [2]float64{3, 100}, [2]float64{3, 300}), k1, b, 0.72},
		{"rare term's idf", hits(9.2, [2]float64{1, 40}, [2]float64{2, 400}, [2]float64{1, 12}, [2]float64{5, 90}), k1, b, 9.2},
		{"one hit", hits(2, [2]float64{3, 100}), k1, b, 0},
		{"hits alike", hits(2, [2]float64{3, 100}, [2]float64{3, 100}, [2]float64{3, 100}, [2]float64{3, 100}), k1, b, 0},
		{"a score off by 1%", spoilt, k1, b, 0},
		{"b = 0", hits(2, [2]float64{3, 100}, [2]float64{5, 200}), k1, 0, 0},
		{"k1 = 0", hits(2, [2]float64{3, 100}, [2]float64{5, 200}), 0, b, 0},
		{"none", nil, k1, b, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			idf, ok := solveIDF(tc.hits, tc.k1, tc.b)
			if tc.want == 0 {
				if ok {
					t.Fatalf("solved %v, want no answer", idf)
				}
				return
			}
			if !ok || math.Abs(idf-tc.want) > 1e-5*tc.want {
				t.Fatalf("idf %v (%v), want %v", idf, ok, tc.want)
			}
		})
	}
}

func TestSolveIDFs(t *testing.T) {
	const k1, b, avgdl = 1.2, 0.75, 120.0
	idfs := []float64{0.7, 2.3, 5.1, 0} // the last term held by no hit
	// hits: every pattern of the first three terms, lengths varied
	var hits []multiHit
	for i := range 24 {
		h := multiHit{dl: float64(40 + (i*37)%200), tf: make([]float64, len(idfs))}
		for tm := range 3 {
			if (i+tm)%3 != 0 || i%5 == tm {
				h.tf[tm] = float64(1 + (i+2*tm)%4)
			}
		}
		for tm, f := range h.tf {
			if f > 0 {
				h.score += score(idfs[tm], f, h.dl, avgdl, k1, b)
			}
		}
		h.score = float64(float32(h.score))
		hits = append(hits, h)
	}
	got, ok := solveIDFs(hits, len(idfs), k1, b)
	if !ok {
		t.Fatal("not solved")
	}
	for i, want := range idfs {
		if math.Abs(got[i]-want) > 1e-5*max(want, 1) {
			t.Errorf("idf %d = %v, want %v", i, got[i], want)
		}
	}
	spoilt := slices.Clone(hits)
	spoilt[5].score *= 1.01
	if _, ok := solveIDFs(spoilt, len(idfs), k1, b); ok {
		t.Error("solved hits with a score 1% off")
	}
	if _, ok := solveIDFs(hits[:3], len(idfs), k1, b); ok {
		t.Error("solved three hits for three idfs and avgdl")
	}
	alike := make([]multiHit, 6) // two terms always together, alike: not separable
	for i := range alike {
		alike[i] = multiHit{dl: float64(50 + i*10), tf: []float64{2, 2}}
		alike[i].score = score(1, 2, alike[i].dl, avgdl, k1, b) + score(3, 2, alike[i].dl, avgdl, k1, b)
	}
	if _, ok := solveIDFs(alike, 2, k1, b); ok {
		t.Error("solved two terms that always come together alike")
	}
}

func TestParseMulti(t *testing.T) {
	terms := []string{"d", "cancer", "vitamin"}
	h, ok := parseMulti(terms, "9.06", ", BM25F_cancer_propLength:165, BM25F_vitamin_frequency:10, BM25F_vitamin_propLength:165, BM25F_cancer_frequency:1")
	if !ok || h.score != 9.06 || h.dl != 165 || !slices.Equal(h.tf, []float64{0, 1, 10}) {
		t.Errorf("got %+v %v", h, ok)
	}
	for _, explain := range []string{
		", BM25F_cancer_frequency:1, BM25F_cancer_propLength:165, BM25F_d_frequency:2, BM25F_d_propLength:166", // lengths differ
		", BM25F_cancer_frequency:1", // no length
		"",                           // no term
	} {
		if h, ok := parseMulti(terms, "1", explain); ok {
			t.Errorf("%q: accepted %+v", explain, h)
		}
	}
}

func TestDFFromIDF(t *testing.T) {
	idf := func(n, df int) float64 { return math.Log(1 + (float64(n-df)+0.5)/(float64(df)+0.5)) }
	for _, n := range []int{4, 10, 5183, 100_000, 3_000_000} {
		for _, df := range []int{0, 1, 4, 5, n / 3, n / 2, n - 1, n} {
			if df < 0 || df > n {
				continue
			}
			x := float64(float32(idf(n, df))) // as precise as a float32 score gives it
			got, ok := dfFromIDF(x, n)
			if !ok || math.Abs(float64(got-df)) > float64(n)*1e-6 {
				t.Errorf("n %d df %d: got %d (%v)", n, df, got, ok)
			}
		}
	}
	for _, tc := range []struct {
		idf float64
		n   int
	}{{0, 10}, {-1, 10}, {math.NaN(), 10}, {math.Inf(1), 10}, {2, 0}, {idf(10, 3) + 0.05, 10}} {
		if df, ok := dfFromIDF(tc.idf, tc.n); ok {
			t.Errorf("idf %v n %d: df %d, want no answer", tc.idf, tc.n, df)
		}
	}
}

func TestParseProbe(t *testing.T) {
	tests := []struct {
		term, score, explain string
		want                 probeHit
		ok                   bool
	}{
		{"cancer", "7.59", ", BM25F_cancer_frequency:7, BM25F_cancer_propLength:222", probeHit{7.59, 7, 222}, true},
		{"d", "9.06", ", BM25F_cancer_propLength:165, BM25F_d_frequency:19, BM25F_d_propLength:165, BM25F_dd_frequency:2", probeHit{9.06, 19, 165}, true},
		{"x", "1", ", BM25F_x_frequency:2.5, BM25F_x_propLength:10.0", probeHit{1, 2.5, 10}, true},
		{"x", "1", ", BM25F_x_frequency:2", probeHit{}, false},
		{"x", "1", ", BM25F_x_frequency:0, BM25F_x_propLength:10", probeHit{}, false},
		{"x", "0", ", BM25F_x_frequency:1, BM25F_x_propLength:10", probeHit{}, false},
		{"x", "NaN", ", BM25F_x_frequency:1, BM25F_x_propLength:10", probeHit{}, false},
		{"x", "1", ", BM25F_x_frequency:Inf, BM25F_x_propLength:10", probeHit{}, false},
		{"x", "1", "", probeHit{}, false},
	}
	for _, tc := range tests {
		got, ok := parseProbe(tc.term, tc.score, tc.explain)
		if ok != tc.ok || got != tc.want {
			t.Errorf("parseProbe(%q, %q, %q) = %+v %v, want %+v %v", tc.term, tc.score, tc.explain, got, ok, tc.want, tc.ok)
		}
	}
}

func FuzzParseProbe(f *testing.F) {
	f.Add("cancer", "7.59", ", BM25F_cancer_frequency:7, BM25F_cancer_propLength:222")
	f.Add("x", "1e308", "BM25F_x_frequency:1e308,BM25F_x_propLength:-1")
	f.Fuzz(func(t *testing.T, term, score, explain string) {
		h, ok := parseProbe(term, score, explain)
		if ok && !(h.score > 0 && h.tf > 0 && h.dl > 0 && !math.IsInf(h.score+h.tf+h.dl, 0)) {
			t.Fatalf("accepted %+v", h)
		}
	})
}

// TestTermDF: on a real server, every term's document frequency as the
// probes find it (and a count where a probe cannot tell) equals a filtered
// count, in a plain class and in one tenant of a multi-tenant class; the
// terms held by probeDepth memories or more are found by the fit, not
// counted.
func TestTermDF(t *testing.T) {
	ctx := ctxT(t)
	for _, tenants := range []bool{false, true} {
		t.Run(fmt.Sprint("tenants=", tenants), func(t *testing.T) {
			s := openTest(t, func(c *Config) {
				if tenants {
					c.TenantKey = "team"
				}
			})
			var mems []*memory.Memory
			scope := map[string]string{}
			tenant := ""
			if tenants {
				scope, tenant = map[string]string{"team": "a"}, "a"
				// another tenant's memories must not move tenant a's figures
				put(t, s, mem("other", "kestrel kestrel kestrel kestrel", func(m *memory.Memory) { m.Scope = map[string]string{"team": "b"} }))
			}
			// kestrel in 30 memories of varied lengths and frequencies,
			// heron in 4, plover in 3, wren in 1; filler words pad them.
			for i := range 40 {
				var words []string
				for range 1 + i%3 {
					if i < 30 {
						words = append(words, "kestrel")
					}
				}
				if i < 4 {
					words = append(words, "heron")
				}
				if i >= 10 && i < 13 {
					words = append(words, "plover")
				}
				if i == 20 {
					words = append(words, "wren")
				}
				for j := range 3 + (i*7)%23 {
					words = append(words, fmt.Sprintf("filler%d", (i+j)%11))
				}
				mems = append(mems, mem(fmt.Sprint("m", i), strings.Join(words, " "), func(m *memory.Memory) { m.Scope = scope }))
			}
			put(t, s, mems...)
			n, err := s.count(ctx, tenant, nil)
			if err != nil || n != 40 {
				t.Fatalf("count %d, %v", n, err)
			}
			terms := []string{"kestrel", "heron", "plover", "wren", "filler3", "absent"}
			want := map[string]int{}
			for _, term := range terms {
				c, err := s.count(ctx, tenant, textClause(pTerms, "Equal", term).proto())
				if err != nil {
					t.Fatal(err)
				}
				want[term] = c
				hits, err := s.probe(ctx, tenant, term)
				if err != nil {
					t.Fatal(err)
				}
				df, ok := dfFromProbe(hits, n, s.cfg.K1, s.cfg.B)
				if !ok || df != c {
					t.Errorf("%s: probe says %d (%v), count %d", term, df, ok, c)
				}
			}
			if want["kestrel"] != 30 || want["heron"] != 4 || want["wren"] != 1 || want["absent"] != 0 {
				t.Fatalf("counts %v: the fixture is not what it says", want)
			}
			// The probe of all terms: by the fit (more hits than it asks
			// for), and outright for rare terms alone (fewer).
			for _, set := range [][]string{terms, {"heron", "plover", "wren", "absent"}} {
				hits, err := s.probeAll(ctx, tenant, set)
				if err != nil {
					t.Fatal(err)
				}
				exhaustive := len(hits) < multiLimit(len(set))
				dfs, ok := dfsFromProbe(hits, set, n, s.cfg.K1, s.cfg.B)
				for i, term := range set {
					held := want[term] > 0
					if (held || exhaustive) && (!ok[i] || dfs[i] != want[term]) {
						t.Errorf("probe of %v (%d hits): %s is %d (%v), count %d", set, len(hits), term, dfs[i], ok[i], want[term])
					}
				}
				if exhaustive != (len(set) == 4) {
					t.Errorf("probe of %v: %d hits, exhaustive %v", set, len(hits), exhaustive)
				}
			}
			gotN, got, err := s.countTerms(ctx, tenant, -1, terms)
			if err != nil || gotN != n {
				t.Fatalf("countTerms: n %d, %v", gotN, err)
			}
			for _, term := range terms {
				if got[term] != want[term] {
					t.Errorf("countTerms %s = %d, want %d", term, got[term], want[term])
				}
			}
		})
	}
}
