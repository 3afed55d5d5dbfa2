package engram_test

import (
	"context"
	"testing"

	"github.com/engram-memory/engram"
)

// TestUsesCountOnlyRelevant: a use is a delivery that was relevant — a search
// result that clears the model's bar, an injected memory, an explicit touch —
// and nothing else: not a result listed below the bar, not a briefing, not a
// search for a topic the store lacks (issue 13: every listed result counted).
func TestUsesCountOnlyRelevant(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, engram.Options{})
	add(t, db,
		&engram.Memory{ID: "vault", Text: "The deploy key for production lives in the team vault under ops/deploy."},
		&engram.Memory{ID: "wifi", Text: "Our office wifi password is on the fridge."},
		&engram.Memory{ID: "tea", Text: "Drinks espresso, no sugar, and dislikes herbal tea.", Favorite: true},
	)
	uses := func() map[string]int64 {
		t.Helper()
		out := map[string]int64{}
		for _, id := range []string{"vault", "wifi", "tea"} {
			m, err := db.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			out[id] = m.Uses
		}
		return out
	}
	steps := []struct {
		name string
		do   func()
		want map[string]int64
	}{
		{"a search lists all three, one clears the bar", func() {
			resp := search(t, db, engram.Query{Query: "where is the production deploy key"})
			if len(resp.Results) < 2 {
				t.Fatalf("want the weaker matches listed too: %v", ids(resp))
			}
			if resp.RelevanceBar <= 0 {
				t.Fatalf("response names no relevance bar: %+v", resp)
			}
		}, map[string]int64{"vault": 1, "wifi": 0, "tea": 0}},
		{"a search for an absent topic counts nothing", func() {
			search(t, db, engram.Query{Query: "how do I configure kubernetes ingress"})
		}, map[string]int64{"vault": 1, "wifi": 0, "tea": 0}},
		{"a briefing counts nothing", func() {
			b, err := db.Brief(ctx, engram.BriefOptions{})
			if err != nil || len(b.Items) != 3 {
				t.Fatalf("brief: %v, %+v", err, b)
			}
		}, map[string]int64{"vault": 1, "wifi": 0, "tea": 0}},
		{"an injection counts what it delivers", func() {
			inj, err := db.Inject(ctx, "production deploy key vault", engram.InjectOptions{})
			if err != nil || len(inj.Results) != 1 || inj.Results[0].ID != "vault" {
				t.Fatalf("inject: %v, %+v", err, inj)
			}
		}, map[string]int64{"vault": 2, "wifi": 0, "tea": 0}},
		{"a touch counts", func() {
			if err := db.Touch(ctx, "wifi"); err != nil {
				t.Fatal(err)
			}
		}, map[string]int64{"vault": 2, "wifi": 1, "tea": 0}},
		{"no_record counts nothing", func() {
			search(t, db, engram.Query{Query: "where is the production deploy key", NoRecord: true})
		}, map[string]int64{"vault": 2, "wifi": 1, "tea": 0}},
	}
	for _, s := range steps {
		s.do()
		got := uses()
		for id, want := range s.want {
			if got[id] != want {
				t.Fatalf("after %q: uses %v, want %v", s.name, got, s.want)
			}
		}
	}
}

// TestModelBarByStrategy: a query asking for the model's bar gets the
// model's for a hybrid search and the keyword bar when only BM25 ran, and the
// response says which it applied and how many candidates it passed over.
func TestModelBarByStrategy(t *testing.T) {
	emb, err := engram.BuiltinEmbedder()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		opts engram.Options
		want float64
	}{
		{"built-in model", engram.Options{}, engram.ModelDefaults(emb.Model()).Relevance},
		{"keyword only", engram.Options{NoEmbedder: true}, engram.KeywordRelevance},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := openTest(t, c.opts)
			add(t, db, &engram.Memory{Text: "The deploy key lives in the vault."}, &engram.Memory{Text: "Lunch is at noon on Fridays."})
			resp := search(t, db, engram.Query{Query: "deploy key", ModelBar: true, NoRecord: true})
			if resp.RelevanceBar != c.want || resp.MinRelevance != c.want {
				t.Fatalf("bar %v, applied %v; want %v", resp.RelevanceBar, resp.MinRelevance, c.want)
			}
			for _, r := range resp.Results {
				if r.Explain.Relevance < c.want {
					t.Fatalf("%s below the bar: %v", r.ID, r.Explain.Relevance)
				}
			}
			all := search(t, db, engram.Query{Query: "deploy key", NoRecord: true})
			if len(all.Results)-len(resp.Results) != resp.BelowBar {
				t.Fatalf("below_bar %d, but %d results were dropped", resp.BelowBar, len(all.Results)-len(resp.Results))
			}
		})
	}
}
