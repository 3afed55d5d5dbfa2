package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/engram-memory/engram/internal/format"
	"github.com/engram-memory/engram/internal/index"
)

// benchReport is what engram bench measured.
type benchReport struct {
	Dim       int         `json:"dim"`
	Queries   int         `json:"queries"`
	Limit     int         `json:"limit"`
	Seed      uint64      `json:"seed"`
	Embedder  string      `json:"embedder"`
	GoVersion string      `json:"go_version"`
	GOOS      string      `json:"goos"`
	GOARCH    string      `json:"goarch"`
	CPUs      int         `json:"cpus"`
	Sizes     []benchSize `json:"sizes"`
}

// benchSize is one store size's measurements.
type benchSize struct {
	Memories      int     `json:"memories"`
	IngestSeconds float64 `json:"ingest_seconds"`
	IngestPerSec  float64 `json:"ingest_per_sec"`
	FileBytes     int64   `json:"file_bytes"`
	// LoadSeconds is engram.Open and loading the index (DB.Warm: the index is
	// otherwise built on first need); OpenSeconds is Open until the first
	// search has answered. Both are the first open after ingest, which
	// rebuilds the index from SQLite (and, from SnapshotMinMemories up, writes
	// the index snapshot); SnapshotOpenSeconds is the next open until the
	// first search, which loads that snapshot (0 when none was written).
	LoadSeconds         float64 `json:"load_seconds"`
	OpenSeconds         float64 `json:"open_seconds"`
	SnapshotOpenSeconds float64 `json:"snapshot_open_seconds"`
	// RSSAfterIngestBytes is VmRSS with the ingesting store still open;
	// RSSBytes is VmRSS after the reopened store answered every query, and
	// HWMBytes the process's peak so far (VmHWM).
	RSSAfterIngestBytes int64 `json:"rss_after_ingest_bytes"`
	RSSBytes            int64 `json:"rss_bytes"`
	HWMBytes            int64 `json:"hwm_bytes"`
	// RSSAnonBytes and RSSFileBytes split RSSBytes into the process's own
	// pages and the file pages it maps (the snapshot's vector matrices, as
	// far as searches touched them: page cache the kernel may reclaim).
	RSSAnonBytes int64 `json:"rss_anon_bytes"`
	RSSFileBytes int64 `json:"rss_file_bytes"`
	// HeapBytes is the Go heap in use after a collection (live data), and
	// Footprint the index's own estimate of its memory by component.
	HeapBytes int64            `json:"heap_bytes"`
	Footprint *index.Footprint `json:"footprint,omitempty"`
	// SnapshotBytes is the index snapshot's size (0 when none was written).
	SnapshotBytes int64         `json:"snapshot_bytes"`
	Search        []benchMode   `json:"search"`
	Recall        []benchRecall `json:"recall"`
}

// benchRecall is the vector leg under one filter: recall@limit of the leg of
// the store as opened (with its ANN graph, if it has one) against the exact
// scan's, and the wall time of both legs.
type benchRecall struct {
	Share       float64     `json:"share"` // of the memories the filter admits
	Recall      float64     `json:"recall"`
	WallMS      percentile3 `json:"wall_ms"`
	ExactWallMS percentile3 `json:"exact_wall_ms"`
}

// hybridWall is the hybrid mode's wall-clock percentiles, if it ran.
func (s benchSize) hybridWall() (percentile3, bool) {
	for _, m := range s.Search {
		if m.Mode == "hybrid" {
			p, ok := m.LatencyMS["wall"]
			return p, ok
		}
	}
	return percentile3{}, false
}

// benchMode is one search mode's latency, by stage (the response's timings_ms
// keys) and "wall" (the whole DB.Search call).
type benchMode struct {
	Mode       string                 `json:"mode"`
	Strategies map[string]int         `json:"strategies"`
	LatencyMS  map[string]percentile3 `json:"latency_ms"`
}

// percentile3 is p50, p95 and p99 in milliseconds (nearest rank).
type percentile3 struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
}

// percentiles summarises each sample list by nearest rank: the p-th percentile
// is the smallest value with at least p% of the values at or below it.
func percentiles(samples map[string][]float64) map[string]percentile3 {
	out := make(map[string]percentile3, len(samples))
	for k, v := range samples {
		if len(v) == 0 {
			continue
		}
		s := slices.Clone(v)
		sort.Float64s(s)
		rank := func(p float64) float64 {
			i := int(math.Ceil(p*float64(len(s)))) - 1
			return s[min(max(i, 0), len(s)-1)]
		}
		out[k] = percentile3{P50: rank(0.50), P95: rank(0.95), P99: rank(0.99)}
	}
	return out
}

// stageOrder is the order stages appear in the table; others follow by name.
var stageOrder = []string{"embed", "hyde", "filter", "bm25", "vector", "fusion", "boosts", "rerank", "mmr", "format", "total", "wall"}

func orderedStages(m map[string]percentile3) []string {
	var out, rest []string
	for _, k := range stageOrder {
		if _, ok := m[k]; ok {
			out = append(out, k)
		}
	}
	for k := range m {
		if !slices.Contains(stageOrder, k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

func (r *benchReport) writeJSON(w io.Writer) error { return format.JSON(w, r, false) }

// writeTable writes the report as two aligned tables: one row per size for the
// store, then one row per size, mode and stage for latency.
func (r *benchReport) writeTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "engram bench: %d-d vectors (%s), %d queries per mode, limit %d, %s %s/%s, %d CPUs\n\n",
		r.Dim, r.Embedder, r.Queries, r.Limit, r.GoVersion, r.GOOS, r.GOARCH, r.CPUs)
	rows := [][]string{{"memories", "ingest/s", "ingest s", "file MB", "load s", "open+search s", "snapshot open+search s", "RSS ingest MB", "RSS MB", "peak MB"}}
	for _, s := range r.Sizes {
		snap := "-"
		if s.SnapshotOpenSeconds > 0 {
			snap = fmt.Sprintf("%.2f", s.SnapshotOpenSeconds)
		}
		rows = append(rows, []string{
			humanCount(s.Memories), fmt.Sprintf("%.0f", s.IngestPerSec), fmt.Sprintf("%.1f", s.IngestSeconds),
			mb(s.FileBytes), fmt.Sprintf("%.2f", s.LoadSeconds), fmt.Sprintf("%.2f", s.OpenSeconds), snap,
			mb(s.RSSAfterIngestBytes), mb(s.RSSBytes), mb(s.HWMBytes),
		})
	}
	alignRows(&b, rows)
	b.WriteString("\nper memory; hybrid wall ms; vector recall@limit vs exact by share allowed\n")
	hdr := []string{"memories", "RSS KB/mem", "disk KB/mem", "db KB/mem", "snapshot KB/mem", "hybrid p50", "hybrid p99", "open+search s"}
	for _, sel := range benchSelectivities {
		hdr = append(hdr, "recall "+shareName(sel.Share))
	}
	rows = [][]string{hdr}
	for _, s := range r.Sizes {
		per := func(b int64) string { return fmt.Sprintf("%.2f", float64(b)/1024/float64(max(s.Memories, 1))) }
		open := s.SnapshotOpenSeconds
		if open == 0 {
			open = s.OpenSeconds
		}
		hp, _ := s.hybridWall()
		row := []string{humanCount(s.Memories), per(s.RSSBytes), per(s.FileBytes + s.SnapshotBytes), per(s.FileBytes), per(s.SnapshotBytes),
			ms3(hp.P50), ms3(hp.P99), fmt.Sprintf("%.2f", open)}
		for _, rr := range s.Recall {
			row = append(row, fmt.Sprintf("%.4f", rr.Recall))
		}
		rows = append(rows, row)
	}
	alignRows(&b, rows)
	b.WriteString("\nmemory per memory, KB: resident (own pages, mapped file pages), Go heap live, and the index's estimate by component\n")
	rows = [][]string{{"memories", "RSS", "anon", "file", "heap", "memories", "lookup", "bm25", "bm25 mapped", "vectors", "vectors mapped", "graph"}}
	for _, s := range r.Sizes {
		per := func(b int64) string { return fmt.Sprintf("%.2f", float64(b)/1024/float64(max(s.Memories, 1))) }
		row := []string{humanCount(s.Memories), per(s.RSSBytes), per(s.RSSAnonBytes), per(s.RSSFileBytes), per(s.HeapBytes)}
		if f := s.Footprint; f != nil {
			row = append(row, per(f.Memories), per(f.Lookup), per(f.BM25), per(f.BM25Mapped), per(f.Vectors), per(f.VectorsMapped), per(f.Graphs))
		} else {
			row = append(row, "-", "-", "-", "-", "-", "-", "-")
		}
		rows = append(rows, row)
	}
	alignRows(&b, rows)
	b.WriteString("\nvector leg alone (Legs) wall ms, as opened vs exact scan, by share allowed\n")
	rows = [][]string{{"memories", "share", "p50", "p99", "exact p50", "exact p99"}}
	for _, s := range r.Sizes {
		for _, rr := range s.Recall {
			rows = append(rows, []string{humanCount(s.Memories), shareName(rr.Share), ms3(rr.WallMS.P50), ms3(rr.WallMS.P99), ms3(rr.ExactWallMS.P50), ms3(rr.ExactWallMS.P99)})
		}
	}
	alignRows(&b, rows)
	b.WriteString("\nsearch latency, ms\n")
	rows = [][]string{{"memories", "mode", "stage", "p50", "p95", "p99"}}
	for _, s := range r.Sizes {
		for _, m := range s.Search {
			for _, st := range orderedStages(m.LatencyMS) {
				p := m.LatencyMS[st]
				rows = append(rows, []string{humanCount(s.Memories), m.Mode, st, ms3(p.P50), ms3(p.P95), ms3(p.P99)})
			}
		}
	}
	alignRows(&b, rows)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

// alignRows writes rows with every column right-aligned except text columns
// (those whose header is "mode" or "stage"), two spaces apart.
func alignRows(b *strings.Builder, rows [][]string) {
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], len(c))
		}
	}
	for _, row := range rows {
		var line strings.Builder
		for i, c := range row {
			if i > 0 {
				line.WriteString("  ")
			}
			pad := strings.Repeat(" ", widths[i]-len(c))
			if h := rows[0][i]; h == "mode" || h == "stage" {
				line.WriteString(c + pad)
			} else {
				line.WriteString(pad + c)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

// humanCount writes 10000 as 10k and 1000000 as 1m when exact.
func humanCount(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return strconv.Itoa(n/1_000_000) + "m"
	case n >= 1000 && n%1000 == 0:
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}

// shareName writes 0.001 as 0.1%.
func shareName(f float64) string { return strconv.FormatFloat(f*100, 'f', -1, 64) + "%" }

func mb(n int64) string { return fmt.Sprintf("%.1f", float64(n)/(1<<20)) }

func ms3(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
