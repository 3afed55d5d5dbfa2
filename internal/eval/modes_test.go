package eval

import (
	"fmt"
	"strings"
	"testing"

	"github.com/engram-memory/engram/memory"
)

// describe renders the query fields a mode sets, for comparison.
func describe(q memory.Query) string {
	f := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	fusion := q.Fusion
	if q.RRFK != 0 {
		fusion += fmt.Sprintf(" k=%g", q.RRFK)
	}
	s := fmt.Sprintf("mode=%s bw=%s w=%s fusion=%s mmr=%t lambda=%s rerank=%t hyde=%t cand=%d",
		q.Mode, f(q.BM25Weight), f(q.VectorWeight), fusion, q.MMR, f(q.Lambda), q.Rerank, q.HyDE, q.Candidates)
	if q.KeywordGate != nil {
		s += " kg=" + f(q.KeywordGate)
	}
	return s
}

func TestParseMode(t *testing.T) {
	cases := []struct {
		spec string
		want string
	}{
		{"bm25", "mode=bm25 bw=- w=- fusion= mmr=false lambda=- rerank=false hyde=false cand=0"},
		{"vector", "mode=vector bw=- w=- fusion= mmr=false lambda=- rerank=false hyde=false cand=0"},
		{" hybrid ", "mode=hybrid bw=- w=- fusion= mmr=false lambda=- rerank=false hyde=false cand=0"},
		{"hybrid:w=0.1", "mode=hybrid bw=1 w=0.1 fusion= mmr=false lambda=- rerank=false hyde=false cand=0"},
		{"hybrid:bw=2:w=0.5", "mode=hybrid bw=2 w=0.5 fusion= mmr=false lambda=- rerank=false hyde=false cand=0"},
		{"hybrid:w=0.5:bw=2", "mode=hybrid bw=2 w=0.5 fusion= mmr=false lambda=- rerank=false hyde=false cand=0"},
		{"hybrid+mmr:lambda=0.5", "mode=hybrid bw=- w=- fusion= mmr=true lambda=0.5 rerank=false hyde=false cand=0"},
		{"hybrid+rerank+hyde:fusion=rsf:candidates=80", "mode=hybrid bw=- w=- fusion=rsf mmr=false lambda=- rerank=true hyde=true cand=80"},
		{"hybrid:k=10", "mode=hybrid bw=- w=- fusion= k=10 mmr=false lambda=- rerank=false hyde=false cand=0"},
		{"hybrid:kg=0.15", "mode=hybrid bw=- w=- fusion= mmr=false lambda=- rerank=false hyde=false cand=0 kg=0.15"},
		{"hybrid:kg=0", "mode=hybrid bw=- w=- fusion= mmr=false lambda=- rerank=false hyde=false cand=0 kg=0"},
	}
	for _, tc := range cases {
		t.Run(tc.spec, func(t *testing.T) {
			m, err := ParseMode(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if m.Name != strings.TrimSpace(tc.spec) {
				t.Errorf("name %q", m.Name)
			}
			var q memory.Query
			m.Apply(&q)
			if got := describe(q); got != tc.want {
				t.Errorf("query\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestParseModeErrors(t *testing.T) {
	cases := map[string]string{
		"empty":            "",
		"unknown strategy": "dense",
		"unknown stage":    "hybrid+boost",
		"no value":         "hybrid:w",
		"empty value":      "hybrid:w=",
		"negative weight":  "hybrid:w=-1",
		"nan weight":       "hybrid:w=NaN",
		"lambda above one": "hybrid+mmr:lambda=1.5",
		"unknown fusion":   "hybrid:fusion=max",
		"zero candidates":  "hybrid:candidates=0",
		"unknown key":      "hybrid:kk=60",
		"zero k":           "hybrid:k=0",
		"infinite k":       "hybrid:k=Inf",
		"repeated key":     "hybrid:w=0.1:w=0.2",
		"gate above one":   "hybrid:kg=1.5",
		"nan gate":         "hybrid:kg=NaN",
	}
	for name, spec := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseMode(spec); err == nil {
				t.Errorf("ParseMode(%q) accepted", spec)
			}
		})
	}
}

func TestParseModesAndSweep(t *testing.T) {
	modes, err := ParseModes("bm25, vector,,hybrid,sweep,hybrid+mmr")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range modes {
		names = append(names, m.Name)
	}
	want := "bm25 vector hybrid hybrid:w=0 hybrid:w=0.05 hybrid:w=0.1 hybrid:w=0.2 hybrid:w=0.3 hybrid:w=0.5 hybrid:w=1 hybrid+mmr"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("names\n got %s\nwant %s", got, want)
	}
	for _, spec := range []string{"", " , ", "bm25,bm25", "sweep,hybrid:w=0.1", "bm25,nope"} {
		if _, err := ParseModes(spec); err == nil {
			t.Errorf("ParseModes(%q) accepted", spec)
		}
	}
	sw := Sweep([]float64{0.25, -1})
	var q memory.Query
	sw[0].Apply(&q)
	if len(sw) != 1 || sw[0].Name != "hybrid:w=0.25" || *q.VectorWeight != 0.25 || *q.BM25Weight != 1 {
		t.Errorf("Sweep([0.25, -1]) = %d modes, %q, %s", len(sw), sw[0].Name, describe(q))
	}
	if std := StandardModes(); len(std) != 3 || std[2].Name != "hybrid" {
		t.Errorf("StandardModes = %v", std)
	}
}

func FuzzParseModes(f *testing.F) {
	for _, s := range []string{"bm25,vector,hybrid", "sweep", "hybrid+mmr:lambda=0.5:w=0.1", "hybrid:fusion=dbsf:candidates=9", "hybrid:kg=0.2,hybrid:kg=0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		modes, err := ParseModes(spec)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, m := range modes {
			if m.Name == "" || seen[m.Name] || m.Apply == nil {
				t.Fatalf("bad mode %+v", m)
			}
			seen[m.Name] = true
			var q memory.Query
			m.Apply(&q)
			if q.Mode != memory.ModeBM25 && q.Mode != memory.ModeVector && q.Mode != memory.ModeHybrid {
				t.Fatalf("mode %q set query mode %q", m.Name, q.Mode)
			}
		}
	})
}
