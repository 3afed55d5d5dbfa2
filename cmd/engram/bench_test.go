package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/golden"
	"github.com/engram-memory/engram/internal/index"
)

func TestBenchCommand(t *testing.T) {
	jsonPath := filepath.Join(t.TempDir(), "bench.json")
	stdout, stderr, code := runCLI(t, "bench", "--sizes", "200", "--dim", "16", "--queries", "7", "--ann-min", "50", "--json", jsonPath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"memories  ingest/s", "search latency, ms", "200  bm25    bm25", "200  vector  vector", "200  hybrid  total", "200  hybrid  wall"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "ingest 200") || !strings.Contains(stderr, "search 200") {
		t.Errorf("no progress on stderr: %q", stderr)
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var r benchReport
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if r.Dim != 16 || r.Queries != 7 || len(r.Sizes) != 1 {
		t.Fatalf("report: %s", data)
	}
	s := r.Sizes[0]
	if s.Memories != 200 || s.IngestPerSec <= 0 || s.FileBytes <= 0 || s.OpenSeconds < s.LoadSeconds || s.LoadSeconds <= 0 {
		t.Errorf("size: %+v", s)
	}
	if _, err := os.Stat("/proc/self/status"); err == nil && (s.RSSBytes <= 0 || s.HWMBytes < s.RSSBytes) {
		t.Errorf("rss %d hwm %d", s.RSSBytes, s.HWMBytes)
	}
	if len(s.Search) != 3 {
		t.Fatalf("modes: %+v", s.Search)
	}
	for _, m := range s.Search {
		if m.Strategies[m.Mode] != 7 {
			t.Errorf("%s ran strategies %v", m.Mode, m.Strategies)
		}
		for _, k := range []string{"total", "wall"} {
			p, ok := m.LatencyMS[k]
			if !ok || p.P50 > p.P95 || p.P95 > p.P99 {
				t.Errorf("%s %s latency %+v", m.Mode, k, p)
			}
		}
	}
	if len(s.Recall) != 4 || s.SnapshotBytes <= 0 {
		t.Fatalf("recall %+v, snapshot %d bytes", s.Recall, s.SnapshotBytes)
	}
	for _, rr := range s.Recall {
		// 200 memories under a graph walk with ef 128 covers them all.
		if rr.Recall != 1 || rr.WallMS.P50 <= 0 || rr.ExactWallMS.P50 <= 0 {
			t.Errorf("recall at %v: %+v", rr.Share, rr)
		}
	}
	if _, ok := s.Search[2].LatencyMS["bm25"]; !ok {
		t.Errorf("hybrid has no bm25 leg timing: %v", s.Search[2].LatencyMS)
	}
}

func TestBenchKeep(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := runCLI(t, "bench", "--sizes", "50", "--dim", "8", "--queries", "2", "--dir", dir, "--keep"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "bench-50.db")); err != nil {
		t.Fatal(err)
	}
	// The timed queries beside it, a line each with its 8-d vector.
	data, err := os.ReadFile(filepath.Join(dir, "queries-50.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d query lines, want 2:\n%s", len(lines), data)
	}
	for _, l := range lines {
		var q struct {
			Query  string    `json:"query"`
			Vector []float32 `json:"vector"`
		}
		if err := json.Unmarshal([]byte(l), &q); err != nil || q.Query == "" || len(q.Vector) != 8 {
			t.Errorf("query line %s: %v, want a query and an 8-d vector", l, err)
		}
	}
}

func TestBenchBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"bad size", []string{"bench", "--sizes", "ten"}, `"ten"`},
		{"zero size", []string{"bench", "--sizes", "0"}, `"0"`},
		{"too large", []string{"bench", "--sizes", "20m"}, `"20m"`},
		{"empty sizes", []string{"bench", "--sizes", ","}, "no sizes"},
		{"bad dim", []string{"bench", "--dim", "0"}, "--dim"},
		{"bad queries", []string{"bench", "--queries", "0"}, "--queries"},
		{"keep without dir", []string{"bench", "--keep"}, "--keep needs --dir"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 with %q", code, stderr, tt.want)
			}
		})
	}
}

func TestParseSizes(t *testing.T) {
	tests := []struct {
		in   string
		want []int
	}{
		{"10k,100k,1m", []int{10_000, 100_000, 1_000_000}},
		{" 200 , 3K ", []int{200, 3000}},
		{"10m", []int{10_000_000}},
	}
	for _, tt := range tests {
		got, err := parseSizes(tt.in)
		if err != nil || len(got) != len(tt.want) {
			t.Fatalf("parseSizes(%q) = %v, %v", tt.in, got, err)
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("parseSizes(%q) = %v, want %v", tt.in, got, tt.want)
			}
		}
	}
}

func TestParseProcStatus(t *testing.T) {
	got := parseProcStatus("Name:\tengram\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\nRssAnon:\t   81920 kB\nRssFile:\t   20480 kB\nThreads:\t4\n")
	if want := (procStatus{RSS: 100 << 20, HWM: 200 << 20, Anon: 80 << 20, File: 20 << 20}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// TestBenchTableGolden pins the table layout on a fixed report (-update rewrites it).
func TestBenchTableGolden(t *testing.T) {
	r := &benchReport{Dim: 512, Queries: 200, Limit: 10, Seed: 1, Embedder: "synth-v1-512",
		GoVersion: "go1.26.8", GOOS: "linux", GOARCH: "amd64", CPUs: 2,
		Sizes: []benchSize{{
			Memories: 100_000, IngestSeconds: 20.5, IngestPerSec: 4878.05, FileBytes: 420 << 20,
			LoadSeconds: 9.25, OpenSeconds: 9.3, SnapshotOpenSeconds: 0.41, SnapshotBytes: 380 << 20,
			RSSAfterIngestBytes: 1500 << 20, RSSBytes: 1400 << 20, HWMBytes: 1600 << 20,
			RSSAnonBytes: 1000 << 20, RSSFileBytes: 400 << 20, HeapBytes: 500 << 20,
			Footprint: &index.Footprint{Memories: 90 << 20, Lookup: 20 << 20, BM25: 50 << 20, BM25Mapped: 30 << 20, Vectors: 2 << 20, VectorsMapped: 250 << 20, Graphs: 27 << 20},
			Recall: []benchRecall{
				{Share: 1, Recall: 0.987, WallMS: percentile3{0.8, 1.1, 1.4}, ExactWallMS: percentile3{3.1, 3.9, 4.4}},
				{Share: 0.1, Recall: 0.9934, WallMS: percentile3{1.2, 1.6, 2}, ExactWallMS: percentile3{2.6, 3, 3.3}},
				{Share: 0.01, Recall: 1, WallMS: percentile3{0.3, 0.4, 0.5}, ExactWallMS: percentile3{0.3, 0.4, 0.5}},
				{Share: 0.001, Recall: 1, WallMS: percentile3{0.1, 0.2, 0.2}, ExactWallMS: percentile3{0.1, 0.2, 0.2}},
			},
			Search: []benchMode{
				{Mode: "bm25", Strategies: map[string]int{"bm25": 200}, LatencyMS: map[string]percentile3{
					"bm25": {0.09, 0.3, 0.5}, "total": {0.2, 0.5, 0.8}, "wall": {0.25, 0.6, 0.9}, "zeta": {1, 2, 3}}},
				{Mode: "hybrid", Strategies: map[string]int{"hybrid": 200}, LatencyMS: map[string]percentile3{
					"embed": {0.02, 0.05, 0.1}, "bm25": {0.1, 0.3, 0.6}, "vector": {5, 7, 9}, "fusion": {0.1, 0.2, 0.3},
					"total": {5.5, 7.5, 9.5}, "wall": {5.6, 7.6, 9.7}}},
			},
		}},
	}
	var b strings.Builder
	if err := r.writeTable(&b); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "bench", "table.golden"), []byte(b.String()))
}
