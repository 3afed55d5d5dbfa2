package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPublishedAnchors(t *testing.T) {
	all := PublishedAnchors()
	if len(all) != 7 {
		t.Fatalf("%d anchors, want 7 (5 SciFact, 2 LoCoMo)", len(all))
	}
	sci := AnchorsFor(all, "scifact")
	if len(sci) != 5 || sci[0].Name != "BM25 flat (Lucene)" || sci[0].Metrics[NDCG10] != 0.6789 || sci[0].Metrics[Recall100] != 0.9253 {
		t.Errorf("scifact anchors = %+v", sci)
	}
	loc := AnchorsFor(all, "locomo-session")
	if len(loc) != 2 || loc[0].Metrics[Recall5] != 0.8325 || loc[1].Metrics[NDCG5] != 0.8292 {
		t.Errorf("locomo anchors = %+v", loc)
	}
	for _, a := range all {
		if a.Source == "" {
			t.Errorf("anchor %s has no source", a.Name)
		}
	}
	if AnchorsFor(all, "locomo-turn") != nil {
		t.Error("session-level anchors offered for turn level")
	}
}

func TestReadAnchorsErrors(t *testing.T) {
	cases := map[string]string{
		"not json":       `{`,
		"no dataset":     `[{"name": "x", "metrics": {"mrr": 0.5}}]`,
		"no metrics":     `[{"dataset": "d", "name": "x"}]`,
		"unknown metric": `[{"dataset": "d", "name": "x", "metrics": {"p@3": 0.5}}]`,
		"out of range":   `[{"dataset": "d", "name": "x", "metrics": {"mrr": 67.89}}]`,
		"unknown field":  `[{"dataset": "d", "name": "x", "metrics": {"mrr": 0.5}, "year": 2024}]`,
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := ReadAnchors(strings.NewReader(data)); err == nil {
				t.Errorf("accepted %s", data)
			}
		})
	}
}

func TestLoadAnchors(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.json")
	if err := os.WriteFile(p, []byte(`[{"dataset": "d", "name": "x", "metrics": {"mrr": 0.5}, "source": "s"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := LoadAnchors(p)
	if err != nil || len(a) != 1 || a[0].Metrics[MRR] != 0.5 {
		t.Fatalf("LoadAnchors = %+v, %v", a, err)
	}
	if _, err := LoadAnchors(p + ".missing"); err == nil {
		t.Error("missing file accepted")
	}
}
