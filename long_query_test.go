package engram_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/memory"
)

// TestLongQueryKeepsDeadline checks that a 5 MB query returns by its
// context's deadline, cancelled or short, by a generous bound: before long
// queries were reduced, a search past its embedding ran the BM25 leg over
// every query term for minutes, whatever the deadline.
func TestLongQueryKeepsDeadline(t *testing.T) {
	prompt := longPrompt(5 << 20)
	for _, store := range []struct {
		name string
		opts engram.Options
		mode string
	}{
		{"keyword-only", engram.Options{NoEmbedder: true}, memory.ModeBM25},
		{"hybrid", engram.Options{Embedder: noiseEmbedder}, memory.ModeHybrid},
	} {
		db := longQueryDB(t, store.opts)
		for _, dl := range []struct {
			name string
			d    time.Duration // 0: cancelled before the call
		}{{"cancelled", 0}, {"10ms", 10 * time.Millisecond}, {"1s", time.Second}} {
			t.Run(store.name+"/"+dl.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), dl.d)
				defer cancel()
				if dl.d == 0 {
					cancel()
				}
				start := time.Now()
				resp, err := db.Search(ctx, engram.Query{Query: prompt, Mode: store.mode, NoRecord: true})
				took := time.Since(start)
				if bound := dl.d + 10*time.Second; took > bound {
					t.Errorf("search took %v with a deadline of %v (bound %v)", took, dl.d, bound)
				}
				switch {
				case err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded):
					t.Errorf("err %v, want nil or the context's", err)
				case err == nil && resp.Reduced == nil:
					t.Error("a 5 MB query answered without being reduced")
				}
			})
		}
	}
}

// TestLongQueryReduced checks what a long query is cut to: its kept terms
// (the store's rare ones, repeats merged), a degraded entry saying so, the
// memory it is about found, and the same answer every time. A query up to
// LongQueryBytes runs whole.
func TestLongQueryReduced(t *testing.T) {
	db := longQueryDB(t, engram.Options{Embedder: noiseEmbedder})
	for _, n := range []int{recall.LongQueryBytes + 1, 1 << 20, 5 << 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			prompt := longPrompt(n)
			resp := search(t, db, engram.Query{Query: prompt, Mode: memory.ModeBM25, NoRecord: true})
			red := resp.Reduced
			if red == nil {
				t.Fatalf("no reduction for %d bytes", n)
			}
			if red.Bytes != n || len(red.Kept) == 0 || len(red.Kept) > recall.MaxQueryTerms || red.Distinct < len(red.Kept) ||
				red.Terms < red.Distinct || red.Window > recall.QueryWindowBytes || red.Sampled > min(n, recall.TermSampleBytes+recall.TermSampleChunks) {
				t.Errorf("reduced %+v", *red)
			}
			for _, want := range []string{"kubernet", "cluster", "upgrad", "stage"} {
				if !slices.Contains(red.Kept, want) {
					t.Errorf("kept %q lacks %q", red.Kept, want)
				}
			}
			i := slices.IndexFunc(resp.Degraded, func(d engram.Degraded) bool { return d.Stage == "query" })
			if i < 0 || !strings.Contains(resp.Degraded[i].Reason, "long query") {
				t.Errorf("degraded %+v: no long-query entry", resp.Degraded)
			}
			if len(resp.Results) == 0 || !strings.Contains(resp.Results[0].Text, "kubernetes") {
				t.Errorf("results %v: the upgrade memory is not first", ids(resp))
			}
			again := search(t, db, engram.Query{Query: prompt, Mode: memory.ModeBM25, NoRecord: true})
			if !slices.Equal(again.Reduced.Kept, red.Kept) || !slices.Equal(ids(again), ids(resp)) {
				t.Error("a long query's reduction is not deterministic")
			}
		})
	}
	short := longPrompt(recall.LongQueryBytes)
	if resp := search(t, db, engram.Query{Query: short, NoRecord: true}); resp.Reduced != nil {
		t.Errorf("a query of %d bytes was reduced: %+v", len(short), *resp.Reduced)
	}
}

// TestLongPromptQuestionLast: a question typed after a long pasted text
// whose words the store knows well (here, each of 100 tickets named ten
// times) is still what a reduced query searches for: the window holds the
// prompt's start and end, and the window's terms are kept before the
// pasted text's. With the first 512 bytes alone and the 64 most
// discriminative terms, the question's words were cut and the memory that
// answers it was not found (any@5 0.036 on LoCoMo questions padded to 8 KB,
// docs/evaluation.md).
func TestLongPromptQuestionLast(t *testing.T) {
	db := openTest(t, engram.Options{Embedder: noiseEmbedder})
	r := rand.New(rand.NewPCG(25, 4))
	word := func() string {
		w := make([]byte, 9)
		for j := range w {
			w[j] = byte('a' + r.IntN(26))
		}
		return string(w)
	}
	mems := []*engram.Memory{{Text: "The deploy key lives in the vault under ops/deploy"}}
	var pasted strings.Builder
	for i := range 100 {
		name := word()
		mems = append(mems, &engram.Memory{Text: fmt.Sprintf("Ticket %s: the %s service restarts at night (%d)", name, word(), i)})
		for range 10 {
			pasted.WriteString("see ticket " + name + " again; ")
		}
	}
	add(t, db, mems...)
	question := "where does the deploy key live?"
	for _, prompt := range []string{pasted.String() + "\n\n" + question, question + "\n\n" + pasted.String()} {
		if len(prompt) <= recall.LongQueryBytes {
			t.Fatalf("the prompt is %d bytes, not long", len(prompt))
		}
		if w := recall.VectorText(prompt); !strings.Contains(w, question) {
			t.Errorf("the vector leg reads %q, not the question", w)
		}
		resp := search(t, db, engram.Query{Query: prompt, Mode: memory.ModeBM25, NoRecord: true})
		if resp.Reduced == nil || !slices.Contains(resp.Reduced.Kept, "deploy") || !slices.Contains(resp.Reduced.Kept, "key") {
			t.Fatalf("reduced to %+v: the question's terms are not kept", resp.Reduced)
		}
		if len(resp.Results) == 0 || !strings.Contains(resp.Results[0].Text, "deploy key") {
			t.Errorf("results %v: the deploy key memory is not first", ids(resp))
		}
	}
}
