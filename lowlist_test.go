package engram_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
)

// TestExplainFusedNamesNoFusion: explain's fused score is "fused", whatever
// the fusion (rsf by default for the built-in models); "rrf" carries the same
// number for older clients.
func TestExplainFusedNamesNoFusion(t *testing.T) {
	db := openTest(t, engram.Options{NoEmbedder: true})
	add(t, db, &engram.Memory{Text: "tasks_claim must run inside a transaction"})
	for _, fusion := range []string{"", "rrf", "rsf", "dbsf"} {
		resp, err := db.Search(ctx, engram.Query{Query: "tasks_claim", Fusion: fusion})
		if err != nil || len(resp.Results) != 1 {
			t.Fatalf("fusion %q: %v, %d results", fusion, err, len(resp.Results))
		}
		ex := resp.Results[0].Explain
		b, _ := json.Marshal(ex)
		if ex.Fused <= 0 || ex.Fused != ex.RRF || !strings.Contains(string(b), `"fused":`) {
			t.Fatalf("fusion %q: explain %s", fusion, b)
		}
	}
}

// TestEmptyImportAnswersEmptyList: an import of nothing answers "ids": [],
// not null.
func TestEmptyImportAnswersEmptyList(t *testing.T) {
	db := openTest(t, engram.Options{NoEmbedder: true})
	for _, in := range []string{"", "\n\n", "{\"text\": 5}\n"} {
		res, err := db.Import(ctx, strings.NewReader(in), engram.ImportOptions{SkipInvalid: true})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		if !strings.Contains(string(b), `"ids":[]`) {
			t.Fatalf("import of %q: %s", in, b)
		}
	}
}
