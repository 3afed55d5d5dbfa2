package eval

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// palette is Tableau 10 (distinct, colour-blind tolerant, readable on white)
// followed by darker shades of the same hues, so that a weight sweep with
// variants (up to 20 series) repeats no colour.
var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
	"#2b4c6f", "#b35c00", "#9e2a2b", "#3f7f7a", "#2f6b2a",
	"#a68a1f", "#7a4b72", "#c2566b", "#5e4535", "#6e6761"}

// SVG chart geometry, in pixels.
const (
	svgBar      = 16  // bar width
	svgBarGap   = 3   // gap between bars of one group
	svgGroupGap = 28  // gap between metric groups
	svgPlotH    = 300 // plot height (the value 1.0)
	svgLeft     = 56
	svgTop      = 64
	svgBottom   = 44
	svgLegendDY = 18
)

type svgSeries struct {
	name      string
	values    map[string]float64
	color     string
	published bool
}

// WriteSVG draws the report as a grouped bar chart: one group per metric, one
// bar per mode (solid) and per published anchor that reports the metric
// (pale, dashed outline), each labelled with its value, and a legend. The SVG
// is self-contained: no scripts, fonts or external references.
func (r *Report) WriteSVG(w io.Writer) error {
	var series []svgSeries
	for i, m := range r.Modes {
		series = append(series, svgSeries{name: m.Name, values: m.Metrics, color: palette[i%len(palette)]})
	}
	for i, a := range r.Anchors {
		series = append(series, svgSeries{name: a.Name + " (published)", values: a.Metrics,
			color: palette[(len(r.Modes)+i)%len(palette)], published: true})
	}
	// Lay the groups out: each holds only the series that report its metric.
	type bar struct {
		x float64
		s svgSeries
		v float64
	}
	var bars []bar
	type group struct{ x0, x1 float64 }
	groups := make([]group, len(r.Metrics))
	x := float64(svgLeft + svgGroupGap/2)
	for gi, metric := range r.Metrics {
		groups[gi].x0 = x
		for _, s := range series {
			if v, ok := s.values[metric]; ok {
				bars = append(bars, bar{x: x, s: s, v: min(max(v, 0), 1)})
				x += svgBar + svgBarGap
			}
		}
		if x == groups[gi].x0 {
			x += svgBar // an empty group still gets a slot for its label
		}
		groups[gi].x1 = x - svgBarGap
		x += svgGroupGap
	}
	plotRight := x - svgGroupGap/2
	legendH := svgLegendDY*len(series) + 24
	longest := 0
	for _, s := range series {
		longest = max(longest, len([]rune(s.name)))
	}
	width := int(plotRight) + 20 + 18 + 7*longest + 16 // legend: gap, swatch, text at ~7px a character
	height := max(svgTop+svgPlotH+svgBottom, svgTop+legendH)
	baseY := float64(svgTop + svgPlotH)

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif">`+"\n",
		width, height, width, height)
	b.WriteString(`<rect width="100%" height="100%" fill="#ffffff"/>` + "\n")
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="16" font-weight="bold">%s</text>`+"\n", svgLeft,
		esc(fmt.Sprintf("%s: %d queries, %d memories, limit %d", r.Dataset, r.Queries, r.Docs, r.Limit)))
	// Grid and y axis.
	for i := 0; i <= 5; i++ {
		v := float64(i) / 5
		y := baseY - v*svgPlotH
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1"/>`+"\n",
			svgLeft, y, plotRight, y, map[bool]string{true: "#333333", false: "#e0e0e0"}[i == 0])
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" font-size="11" text-anchor="end" fill="#555555">%.1f</text>`+"\n", svgLeft-6, y+4, v)
	}
	// Bars with their values.
	for _, br := range bars {
		h := br.v * svgPlotH
		style := fmt.Sprintf(`fill="%s"`, br.s.color)
		if br.s.published {
			style = fmt.Sprintf(`fill="%s" fill-opacity="0.35" stroke="%s" stroke-width="1.5" stroke-dasharray="3 2"`, br.s.color, br.s.color)
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%d" height="%.1f" %s><title>%s</title></rect>`+"\n",
			br.x, baseY-h, svgBar, h, style, esc(fmt.Sprintf("%s: %.4f", br.s.name, br.v)))
		lx, ly := br.x+svgBar/2+3.5, baseY-h-4
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="10" fill="#333333" transform="rotate(-90 %.1f %.1f)">%s</text>`+"\n",
			lx, ly, lx, ly, strings.TrimPrefix(fmt.Sprintf("%.3f", br.v), "0"))
	}
	// Metric labels under each group.
	for gi, metric := range r.Metrics {
		cx := (groups[gi].x0 + groups[gi].x1) / 2
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="13" text-anchor="middle">%s</text>`+"\n", cx, baseY+20, esc(metric))
	}
	// Legend.
	lx := plotRight + 20
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="12" font-weight="bold">modes</text>`+"\n", lx, svgTop)
	for i, s := range series {
		y := svgTop + 10 + i*svgLegendDY
		style := fmt.Sprintf(`fill="%s"`, s.color)
		if s.published {
			style = fmt.Sprintf(`fill="%s" fill-opacity="0.35" stroke="%s" stroke-width="1.5" stroke-dasharray="3 2"`, s.color, s.color)
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="12" height="12" %s/>`+"\n", lx, y, style)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="12">%s</text>`+"\n", lx+18, y+10, esc(s.name))
	}
	b.WriteString("</svg>\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write svg: %w", err)
	}
	return nil
}

// esc escapes text for an XML text node or attribute.
func esc(s string) string {
	var b strings.Builder
	if err := xml.EscapeText(&b, []byte(s)); err != nil {
		return ""
	}
	return b.String()
}
