package eval

import (
	"bytes"
	"strings"
	"testing"
)

func TestMeasureDelivery(t *testing.T) {
	c := func(id string, rel float64) DeliveryCand { return DeliveryCand{ID: id, Relevance: rel} }
	qs := []*DeliveryQuestion{
		{Set: SetAnswerable, Gold: map[string]int{"g": 1}, Bar: 0.2, Cands: []DeliveryCand{c("x", 0.5), c("g", 0.3)}},
		{Set: SetAnswerable, Gold: map[string]int{"g": 1}, Bar: 0.2, Cands: []DeliveryCand{c("g", 0.1)}},
		{Set: SetAbsentLC, Bar: 0.2, Cands: []DeliveryCand{c("y", 0.25)}},
		{Set: SetAbsentLC, Bar: 0.2, Cands: []DeliveryCand{c("y", 0.05)}},
		{Set: SetAbsentSF, Bar: 0.2, Cands: nil},
	}
	rep := MeasureDelivery(qs, "m", 0.2, 1, []float64{0, 0.4}, 1)
	cases := []struct {
		name      string
		row       DeliveryRow
		delivered float64
		emptyAns  float64
		emptyLC   float64
	}{
		// Limit 1: at bar 0 the first question delivers x, not its gold.
		{"bar 0", rep.Rows[0], 0.5, 0, 0},
		{"bar 0.4", rep.Rows[1], 0, 0.5, 1},
		// At 0.2 the first question's x still comes first; the second is empty.
		{"the model's bar", rep.Default, 0, 0.5, 0.5},
		// The smallest grid bar that empties both absent sets: above 0.25.
		{"suggested", rep.Suggested, 0, 0.5, 1},
	}
	for _, tc := range cases {
		if tc.row.Delivered != tc.delivered || tc.row.Empty[SetAnswerable] != tc.emptyAns || tc.row.Empty[SetAbsentLC] != tc.emptyLC {
			t.Errorf("%s: %+v", tc.name, tc.row)
		}
	}
	if rep.Suggested.Bar != 0.255 {
		t.Errorf("suggested bar %v, want 0.255", rep.Suggested.Bar)
	}
	var b bytes.Buffer
	if err := rep.WriteTable(&b); err != nil || !strings.Contains(b.String(), "← the model's bar") {
		t.Fatalf("table: %v\n%s", err, b.String())
	}
}

// TestDeliveryOneLegRows: a report with keyword-only and vector-only ones
// writes the three sweeps and one row per state at its own bar.
func TestDeliveryOneLegRows(t *testing.T) {
	c := func(id string, rel float64) DeliveryCand { return DeliveryCand{ID: id, Relevance: rel} }
	hybrid := []*DeliveryQuestion{
		{Set: SetAnswerable, Gold: map[string]int{"g": 1}, Bar: 0.2, Cands: []DeliveryCand{c("g", 0.3)}},
		{Set: SetAbsentLC, Bar: 0.2, Cands: []DeliveryCand{c("y", 0.1)}},
	}
	keywords := []*DeliveryQuestion{
		{Set: SetAnswerable, Gold: map[string]int{"g": 1}, Bar: 0.28, Cands: []DeliveryCand{c("g", 0.25)}},
		{Set: SetAbsentLC, Bar: 0.28, Cands: []DeliveryCand{c("y", 0.3)}},
	}
	rep := MeasureDelivery(hybrid, "m", 0.2, 5, []float64{0}, 0.9)
	rep.KeywordOnly = MeasureDelivery(keywords, KeywordOnly, 0.28, 5, []float64{0}, 0.9)
	vectors := []*DeliveryQuestion{
		{Set: SetAnswerable, Gold: map[string]int{"g": 1}, Bar: 0.3, Cands: []DeliveryCand{c("g", 0.35)}},
		{Set: SetAbsentLC, Bar: 0.3, Cands: []DeliveryCand{c("y", 0.31)}},
	}
	rep.VectorOnly = MeasureDelivery(vectors, VectorOnly, 0.3, 5, []float64{0}, 0.9)
	var b bytes.Buffer
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"model keyword-only: inject",
		"model vector-only: inject",
		"m             0.200  100.0%                0.0%               100.0%",
		"keyword-only  0.280  0.0%                  0.0%               0.0%",
		"vector-only   0.300  100.0%                0.0%               0.0%",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}
