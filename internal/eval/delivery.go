package eval

// The delivery measure: how often prompt-matched recall (inject) hands an
// agent what answers its question, and how often it stays silent when the
// store holds nothing on the topic, as a function of the relevance bar.
//
//   - answerable: LoCoMo questions (categories 1–4) against their own
//     conversation; delivered = inject's results hold a gold turn.
//   - adversarial: LoCoMo category 5 against its conversation (reported only).
//   - scifact: SciFact questions against SciFact, a second answerable set with
//     long memories (reported only: delivered = a relevant abstract).
//   - absent: questions about a topic the store lacks — LoCoMo questions
//     against the SciFact store, SciFact questions against each conversation;
//     empty = inject delivers nothing.
//
// Each question is asked once, for its ranked candidates with their relevance;
// what inject delivers at a bar is then the first Limit candidates that clear
// it, so a bar sweep costs nothing more. The caller checks that simulation
// against the real inject at the model's bar.

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Delivery question sets.
const (
	SetAnswerable  = "answerable"
	SetAdversarial = "adversarial"
	SetSciFact     = "scifact"
	SetAbsentLC    = "absent:locomo→scifact"
	SetAbsentSF    = "absent:scifact→locomo"
)

// DeliverySets are the sets in report order; the absent ones decide the bar.
var DeliverySets = []string{SetAnswerable, SetAdversarial, SetSciFact, SetAbsentLC, SetAbsentSF}

// DeliveryCand is one candidate inject considers: its id and relevance.
type DeliveryCand struct {
	ID        string  `json:"id"`
	Relevance float64 `json:"relevance"`
	// Cosine is the vector leg's cosine, when it ranked the candidate: with
	// the model's floor it gives the relevance's two parts, for trying
	// another combination offline (--per-query).
	Cosine float64 `json:"cosine,omitempty"`
}

// DeliveryQuestion is one question's candidates, in inject's order, and the
// model's bar for the strategy its search ran (a query with no known word runs
// on keywords alone, under the keyword bar).
type DeliveryQuestion struct {
	Set   string         `json:"set"`
	ID    string         `json:"id"`
	Gold  map[string]int `json:"gold,omitempty"`
	Bar   float64        `json:"bar"`
	Cands []DeliveryCand `json:"cands"`
}

// Delivered is what inject delivers at bar: the first limit candidates whose
// relevance is at least bar.
func (q *DeliveryQuestion) Delivered(bar float64, limit int) []string {
	var out []string
	for _, c := range q.Cands {
		if len(out) == limit {
			break
		}
		if c.Relevance >= bar {
			out = append(out, c.ID)
		}
	}
	return out
}

// DeliveryRow is one bar's outcome: per set, the share of questions left
// with nothing; for answerable LoCoMo questions also the share delivered a
// gold turn, and for SciFact the share delivered a relevant abstract.
type DeliveryRow struct {
	Bar              float64            `json:"bar"`
	Empty            map[string]float64 `json:"empty"`
	Delivered        float64            `json:"delivered"`
	SciFactDelivered float64            `json:"scifact_delivered"`
}

// DeliveryReport is the measure over a bar sweep.
type DeliveryReport struct {
	Model string `json:"model"`
	// Bar is the model's bar: the row inject uses by default.
	Bar    float64        `json:"bar"`
	Limit  int            `json:"limit"`
	Counts map[string]int `json:"counts"`
	Rows   []DeliveryRow  `json:"rows"`
	// Default is the outcome at Bar.
	Default DeliveryRow `json:"default"`
	// Target is the share of each absent-topic set a suggested bar leaves
	// empty; Suggested the smallest bar (on a 0.005 grid) that does, with its
	// outcome.
	Target    float64     `json:"target"`
	Suggested DeliveryRow `json:"suggested"`
	// Checked counts the questions whose simulated delivery at Bar was
	// compared with a real inject; Mismatched those that differed.
	Checked    int      `json:"checked"`
	Mismatched int      `json:"mismatched"`
	Notes      []string `json:"notes,omitempty"`
	// KeywordOnly is the same questions asked on keywords alone, as inject
	// answers them when the vector leg is missing, under the keyword-only
	// bar (nil when the run had no embedder: the report is that already).
	KeywordOnly *DeliveryReport `json:"keyword_only,omitempty"`
	// Questions is every question with its candidates (--per-query).
	Questions []*DeliveryQuestion `json:"questions,omitempty"`
	// VectorOnly is the same questions asked on the vector leg alone (mode
	// vector) under the model's vector-only bar (nil without an embedder).
	VectorOnly *DeliveryReport `json:"vector_only,omitempty"`
}

// KeywordOnly and VectorOnly name the one-leg states in a report.
const (
	KeywordOnly = "keyword-only"
	VectorOnly  = "vector-only"
)

// MeasureDelivery tabulates questions at each bar in bars, at the model's bar
// (each question's own, Default) and at the smallest bar that leaves target
// of each absent-topic set empty.
func MeasureDelivery(qs []*DeliveryQuestion, model string, modelBar float64, limit int, bars []float64, target float64) *DeliveryReport {
	rep := &DeliveryReport{Model: model, Bar: modelBar, Limit: limit, Target: target, Counts: map[string]int{}}
	for _, q := range qs {
		rep.Counts[q.Set]++
	}
	for _, b := range bars {
		rep.Rows = append(rep.Rows, deliveryRow(qs, b, limit, false))
	}
	rep.Default = deliveryRow(qs, modelBar, limit, true)
	rep.Suggested = deliveryRow(qs, 1, limit, false)
	for i := 0; i <= 200; i++ {
		b := float64(i) / 200
		row := deliveryRow(qs, b, limit, false)
		ok := true
		for _, set := range []string{SetAbsentLC, SetAbsentSF} {
			if rep.Counts[set] > 0 && row.Empty[set] < target {
				ok = false
			}
		}
		if ok {
			rep.Suggested = row
			break
		}
	}
	return rep
}

// deliveryRow is the outcome at bar, or, with own, at each question's bar.
func deliveryRow(qs []*DeliveryQuestion, bar float64, limit int, own bool) DeliveryRow {
	row := DeliveryRow{Bar: bar, Empty: map[string]float64{}}
	n := map[string]int{}
	for _, q := range qs {
		b := bar
		if own {
			b = q.Bar
		}
		got := q.Delivered(b, limit)
		n[q.Set]++
		if len(got) == 0 {
			row.Empty[q.Set]++
		}
		if slices.ContainsFunc(got, func(id string) bool { return q.Gold[id] > 0 }) {
			switch q.Set {
			case SetAnswerable:
				row.Delivered++
			case SetSciFact:
				row.SciFactDelivered++
			}
		}
	}
	for set, k := range n {
		row.Empty[set] /= float64(k)
	}
	if k := n[SetAnswerable]; k > 0 {
		row.Delivered /= float64(k)
	}
	if k := n[SetSciFact]; k > 0 {
		row.SciFactDelivered /= float64(k)
	}
	return row
}

// WriteTable writes the sweep, the model's bar and the suggested one; with
// one-leg reports, their sweeps and then each state's row at its bar.
func (r *DeliveryReport) WriteTable(w io.Writer) error {
	if err := r.writeSweep(w); err != nil {
		return err
	}
	states := []*DeliveryReport{r}
	for _, one := range []struct {
		rep   *DeliveryReport
		title string
	}{
		{r.KeywordOnly, "with the vector leg missing (no embedder, or one down or slow), on keywords alone"},
		{r.VectorOnly, "on the vector leg alone (mode vector)"},
	} {
		if one.rep == nil {
			continue
		}
		if _, err := io.WriteString(w, "\n"+one.title+":\n\n"); err != nil {
			return err
		}
		if err := one.rep.writeSweep(w); err != nil {
			return err
		}
		states = append(states, one.rep)
	}
	if len(states) == 1 {
		return nil
	}
	var b strings.Builder
	b.WriteString("\neach state at its bar:\n\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "state\tbar\tanswerable delivered\tscifact delivered\tlocomo→scifact empty\tscifact→locomo empty\t\n")
	for _, s := range states {
		fmt.Fprintf(tw, "%s\t%.3f\t%.1f%%\t%.1f%%\t%.1f%%\t%.1f%%\t\n", s.Model, s.Bar, 100*s.Default.Delivered,
			100*s.Default.SciFactDelivered, 100*s.Default.Empty[SetAbsentLC], 100*s.Default.Empty[SetAbsentSF])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeSweep writes one report's sweep.
func (r *DeliveryReport) writeSweep(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "model %s: inject (limit %d) at each relevance bar; questions:", r.Model, r.Limit)
	for _, set := range DeliverySets {
		fmt.Fprintf(&b, " %s %d", set, r.Counts[set])
	}
	b.WriteString("\n\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "bar\tanswerable delivered\tscifact delivered\t")
	for _, set := range DeliverySets {
		fmt.Fprintf(tw, "%s empty\t", set)
	}
	fmt.Fprint(tw, "\t\n")
	rows := append(append([]DeliveryRow(nil), r.Rows...), r.Default, r.Suggested)
	for i, row := range rows {
		mark := ""
		switch i {
		case len(rows) - 2:
			mark = "← the model's bar"
		case len(rows) - 1:
			mark = fmt.Sprintf("← suggested: each absent set ≥ %.0f%% empty", 100*r.Target)
		}
		fmt.Fprintf(tw, "%.3f\t%.1f%%\t%.1f%%\t", row.Bar, 100*row.Delivered, 100*row.SciFactDelivered)
		for _, set := range DeliverySets {
			fmt.Fprintf(tw, "%.1f%%\t", 100*row.Empty[set])
		}
		fmt.Fprintf(tw, "%s\t\n", mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "\nat the model's bar %.3f: inject delivers a gold turn for %.1f%% of answerable LoCoMo questions; "+
		"absent-topic questions get nothing %.1f%% (LoCoMo→SciFact) and %.1f%% (SciFact→LoCoMo) of the time\n",
		r.Bar, 100*r.Default.Delivered, 100*r.Default.Empty[SetAbsentLC], 100*r.Default.Empty[SetAbsentSF])
	if r.Checked > 0 {
		fmt.Fprintf(&b, "checked against the real inject at the model's bar: %d questions, %d differ\n", r.Checked, r.Mismatched)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// DefaultDeliveryBars are the bars a sweep tabulates.
var DefaultDeliveryBars = []float64{0, 0.05, 0.08, 0.1, 0.12, 0.14, 0.16, 0.18, 0.2, 0.25, 0.3}
