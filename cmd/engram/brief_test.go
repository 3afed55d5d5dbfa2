package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
)

func TestBriefInjectGolden(t *testing.T) {
	for _, tc := range []struct {
		name, stdin string
		args        []string
	}{
		{"brief_all", "", []string{"brief"}},
		{"brief_scope", "", []string{"brief", "--scope", "project=engram"}},
		{"brief_budget", "", []string{"brief", "--budget", "150"}},
		{"brief_limit_json", "", []string{"brief", "--limit", "2", "--json"}},
		{"brief_empty_scope", "", []string{"brief", "--scope", "project=nothing-here"}},
		{"inject", "", []string{"inject", "How do we deploy to production?"}},
		{"inject_stdin", "who reviews schema migrations", []string{"inject", "-", "--scope", "project=engram"}},
		{"inject_nothing", "", []string{"inject", "Write a haiku about autumn leaves."}},
		{"inject_nothing_json", "", []string{"inject", "Write a haiku about autumn leaves.", "--json"}},
		{"inject_other_scope", "", []string{"inject", "How do we deploy to production?", "--scope", "project=billing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := deliveryStore(t)
			out, errs, code := engramRun(t, tc.stdin, append([]string{"--db", db}, tc.args...)...)
			if code != 0 || errs != "" {
				t.Fatalf("exit %d, stderr %q", code, errs)
			}
			checkGolden(t, "delivery/"+tc.name+".golden", out)
		})
	}
}

func TestInjectJSON(t *testing.T) {
	db := deliveryStore(t)
	out, errs, code := engramRun(t, "", "--db", db, "inject", "blue-green pipeline OPS-4512", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var inj struct {
		Results []struct {
			ID      string
			Explain struct{ Relevance float64 }
		}
		Text, Strategy string
		MinRelevance   float64 `json:"min_relevance"`
	}
	if err := json.Unmarshal([]byte(out), &inj); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(inj.Results) == 0 || inj.Results[0].ID != "01HZX0000000000000000DEPLOY" || !strings.Contains(inj.Text, "OPS-4512") {
		t.Fatalf("inject: %s", out)
	}
	// The bar applied is the default model's, and every result clears it.
	emb, err := engram.BuiltinEmbedder()
	if err != nil {
		t.Fatal(err)
	}
	if want := engram.ModelDefaults(emb.Model()).Relevance; inj.MinRelevance != want {
		t.Errorf("min_relevance %v, want the default model's bar %v", inj.MinRelevance, want)
	}
	for _, r := range inj.Results {
		if r.Explain.Relevance < inj.MinRelevance {
			t.Errorf("%s below the bar %v: %v", r.ID, inj.MinRelevance, r.Explain.Relevance)
		}
	}
}

func TestBriefInjectBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"brief budget zero", "", []string{"brief", "--budget", "0"}, "--budget"},
		{"brief negative limit", "", []string{"brief", "--limit", "-1"}, "--limit"},
		{"brief bad scope", "", []string{"brief", "--scope", "nokey"}, "--scope"},
		{"brief extra arg", "", []string{"brief", "extra"}, "brief"},
		{"inject no prompt", "", []string{"inject"}, "inject"},
		{"inject empty prompt", "", []string{"inject", "  "}, "empty"},
		{"inject empty stdin", "", []string{"inject", "-"}, "empty"},
		{"inject relevance above 1", "", []string{"inject", "x", "--min-relevance", "2"}, "--min-relevance"},
		{"inject budget not a number", "", []string{"inject", "x", "--budget", "lots"}, "budget"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := deliveryStore(t)
			out, errs, code := engramRun(t, tc.stdin, append([]string{"--db", db}, tc.args...)...)
			if code != 2 || out != "" || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line naming %q", code, out, errs, tc.want)
			}
		})
	}
}
