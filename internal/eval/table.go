package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// WriteTable writes the report as aligned text: a header line, any notes, one
// row per mode with its mean metrics and search latency, the anchors as rows
// marked "(published)", then the headline metric (the first) per category, and
// any degraded searches.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	corpora := "corpora"
	if r.Corpora == 1 {
		corpora = "corpus"
	}
	fmt.Fprintf(&b, "%s: %d queries over %d %s (%d memories), %d skipped, limit %d\n",
		r.Dataset, r.Queries, r.Corpora, corpora, r.Docs, r.Skipped, r.Limit)
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	b.WriteByte('\n')
	head := append([]string{"mode"}, r.Metrics...)
	head = append(head, "p50 ms", "p95 ms")
	rows := [][]string{head}
	for _, m := range r.Modes {
		row := []string{m.Name}
		for _, k := range r.Metrics {
			row = append(row, fmtMetric(m.Metrics, k))
		}
		row = append(row, fmtMS(m.LatencyMS.P50), fmtMS(m.LatencyMS.P95))
		rows = append(rows, row)
	}
	for _, a := range r.Anchors {
		row := []string{a.Name + " (published)"}
		for _, k := range r.Metrics {
			row = append(row, fmtMetric(a.Metrics, k))
		}
		rows = append(rows, append(row, "-", "-"))
	}
	writeAligned(&b, rows)
	if t := r.categoryRows(); t != nil {
		fmt.Fprintf(&b, "\n%s by category (queries)\n", r.Metrics[0])
		writeAligned(&b, t)
	}
	if t := r.groupRows(); t != nil {
		fmt.Fprintf(&b, "\n%s by question (queries)\n", r.Metrics[0])
		writeAligned(&b, t)
	}
	for _, m := range r.Modes {
		keys := make([]string, 0, len(m.Degraded))
		for k := range m.Degraded {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  degraded: %s: %d of %d searches: %s\n", m.Name, m.Degraded[k], m.Queries, k)
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

// categoryRows is the per-category table of the headline metric, or nil when
// no mode has categories.
func (r *Report) categoryRows() [][]string {
	seen := map[int]string{}
	count := map[int]int{}
	for _, m := range r.Modes {
		for _, c := range m.Categories {
			seen[c.Category] = c.Name
			count[c.Category] = max(count[c.Category], c.Queries)
		}
	}
	cats := make([]int, 0, len(seen))
	for c := range seen {
		cats = append(cats, c)
	}
	sort.Ints(cats)
	heads := make([]string, len(cats))
	for i, c := range cats {
		label := strconv.Itoa(c)
		if seen[c] != "" {
			label += " " + seen[c]
		}
		heads[i] = fmt.Sprintf("%s (%d)", label, count[c])
	}
	return r.breakdown(heads, func(m ModeResult, i int) (Metrics, bool) {
		for _, cr := range m.Categories {
			if cr.Category == cats[i] {
				return cr.Metrics, true
			}
		}
		return nil, false
	})
}

// groupRows is the per-group table of the headline metric, or nil when no
// mode has groups.
func (r *Report) groupRows() [][]string {
	count := map[string]int{}
	var names []string
	for _, m := range r.Modes {
		for _, g := range m.Groups {
			if _, ok := count[g.Name]; !ok {
				names = append(names, g.Name)
			}
			count[g.Name] = max(count[g.Name], g.Queries)
		}
	}
	sort.Strings(names)
	heads := make([]string, len(names))
	for i, g := range names {
		heads[i] = fmt.Sprintf("%s (%d)", g, count[g])
	}
	return r.breakdown(heads, func(m ModeResult, i int) (Metrics, bool) {
		for _, gr := range m.Groups {
			if gr.Name == names[i] {
				return gr.Metrics, true
			}
		}
		return nil, false
	})
}

// breakdown is a table of the headline metric: a column per head, a row per
// mode, each cell what cell finds for the mode and column ("-" for none);
// nil without heads or metrics.
func (r *Report) breakdown(heads []string, cell func(m ModeResult, col int) (Metrics, bool)) [][]string {
	if len(heads) == 0 || len(r.Metrics) == 0 {
		return nil
	}
	rows := [][]string{append([]string{"mode"}, heads...)}
	for _, m := range r.Modes {
		row := []string{m.Name}
		for i := range heads {
			v := "-"
			if ms, ok := cell(m, i); ok {
				v = fmtMetric(ms, r.Metrics[0])
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	return rows
}

// writeAligned writes rows with the first column left-aligned and the others
// right-aligned, two spaces apart.
func writeAligned(b *strings.Builder, rows [][]string) {
	var widths []int
	for _, row := range rows {
		for i, cell := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len([]rune(cell)))
		}
	}
	for _, row := range rows {
		var line strings.Builder
		for i, cell := range row {
			pad := strings.Repeat(" ", widths[i]-len([]rune(cell)))
			if i == 0 {
				line.WriteString(cell + pad)
			} else {
				line.WriteString("  " + pad + cell)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

func fmtMetric(m map[string]float64, k string) string {
	v, ok := m[k]
	if !ok {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 4, 64)
}

func fmtMS(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}
