package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
)

// calibrationStore writes a store of n memories of a dozen words each.
func calibrationStore(t *testing.T, n int) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "cal.db")
	topics := []string{"deploy key vault rotation", "dark theme editor terminal", "espresso coffee sugar morning",
		"standup meeting tuesday thursday", "flight booking airport lounge"}
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id":"m%02d","text":"Note %d about the %s and what the team decided for week %d of the plan."}`+"\n",
			i, i, topics[i%len(topics)], i)
	}
	mustCLI(t, db, b.String(), "import", "-")
	return db
}

func TestCalibrateCommand(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "")
	emb, err := engram.BuiltinEmbedder()
	if err != nil {
		t.Fatal(err)
	}
	modelWeight := engram.ModelDefaults(emb.Model()).VectorWeight
	db := calibrationStore(t, 40)
	out := mustCLI(t, db, "", "calibrate", "--dry-run", "--samples", "35")
	for _, want := range []string{"35 pseudo-queries (heldout)", "MRR@10", "not stored (dry run)", fmt.Sprintf("searches keep %g (model)", modelWeight), "← "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// A weight of 0 switches the vector leg off: shown, not stored, unless asked.
	// 3 is far from the model's default, so 0 is chosen whenever it is within one
	// standard error of the best.
	out = mustCLI(t, db, "", "calibrate", "--weights", "0,3", "--method", "partial")
	if !strings.Contains(out, "vector weight 0 not stored: a weight of 0 switches the vector leg off") || !strings.Contains(out, "--allow-off") {
		t.Fatalf("a weight of 0 without --allow-off:\n%s", out)
	}
	if s := mustCLI(t, db, "", "--json", "stats"); !strings.Contains(s, `"weight_source": "model"`) {
		t.Fatalf("a refused weight was stored:\n%s", s)
	}
	js := mustCLI(t, db, "", "--json", "calibrate", "--weights", "0,3", "--method", "partial", "--allow-off")
	var res struct {
		Method string  `json:"method"`
		Chosen float64 `json:"chosen"`
		Best   float64 `json:"best"`
		Stored bool    `json:"stored"`
		Points []struct {
			Weight float64 `json:"weight"`
			MRR    float64 `json:"mrr"`
		} `json:"points"`
	}
	if err := json.Unmarshal([]byte(js), &res); err != nil {
		t.Fatalf("%v: %s", err, js)
	}
	if res.Method != "partial" || !res.Stored || res.Chosen != 0 || len(res.Points) != 2 {
		t.Fatalf("result %+v", res)
	}
	search := mustCLI(t, db, "", "--json", "search", "deploy key", "--no-record")
	if !strings.Contains(search, `"weight_source": "store"`) {
		t.Errorf("search after calibrate does not use the store's weight:\n%s", search)
	}
	if out := mustCLI(t, db, "", "calibrate", "--reset"); !strings.Contains(out, fmt.Sprintf("searches use the model's %g", modelWeight)) {
		t.Errorf("reset: %s", out)
	}
	if search := mustCLI(t, db, "", "--json", "search", "deploy key", "--no-record"); !strings.Contains(search, `"weight_source": "model"`) {
		t.Errorf("search after --reset does not use the model's weight:\n%s", search)
	}
}

func TestCalibrateBadInput(t *testing.T) {
	db := calibrationStore(t, 40)
	small := calibrationStore(t, 3)
	cases := []struct {
		name string
		db   string
		env  string
		args []string
		want string
	}{
		{"bad weights", db, "", []string{"calibrate", "--weights", "0,x"}, `"x" is not a number`},
		{"negative weight", db, "", []string{"calibrate", "--weights", "-1"}, "is not a number in [0, 1e6]"},
		{"bad method", db, "", []string{"calibrate", "--method", "guess"}, `method "guess"`},
		{"negative samples", db, "", []string{"calibrate", "--samples", "-3"}, "must not be negative"},
		{"extra argument", db, "", []string{"calibrate", "now"}, `calibrate takes no arguments, got "now"`},
		{"too small", small, "", []string{"calibrate"}, "need 30"},
		{"no embedder", db, "none", []string{"calibrate"}, "needs an embedder"},
		{"missing store", filepath.Join(t.TempDir(), "typo.db"), "", []string{"calibrate"}, "no store at"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("ENGRAM_EMBEDDER", c.env)
			_, stderr, code := cli(t, c.db, "", c.args...)
			if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want 2 and one line with %q", code, stderr, c.want)
			}
		})
	}
}
