package weaviate

import (
	"fmt"
	"math"
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
