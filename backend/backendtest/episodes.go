package backendtest

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/internal/index"
	"github.com/engram-memory/engram/memory"
)

// turn is a memory of an episode at position seq.
func turn(id, episode string, seq int64, speaker, text string, scope map[string]string) *memory.Memory {
	m := mem(id, text, scope)
	m.Episode, m.Seq, m.Speaker = episode, seq, speaker
	m.OccurredAt = at.Add(-time.Duration(100-seq) * time.Minute)
	return m
}

// bm25Has reports whether the keyword leg finds id for the query.
func bm25Has(t *testing.T, b backend.Backend, text, id string) bool {
	t.Helper()
	return slices.Contains(ids(legs(t, b, backend.LegQuery{K: 20, Text: text}).BM25), id)
}

// testEpisodeContext: a memory of an episode is found by its neighbours'
// words (its context), straight after every write that changes them, and
// only by its own episode's: the answer turn that never repeats its topic is
// found through the question before it.
func testEpisodeContext(t *testing.T, s suite) {
	b := s.backend(t)
	// The question, the answer, k-1 turns of filler and a last turn: the
	// last turn is k turns after the answer (a neighbour) and k+1 after the
	// question (not one), k the backends' default context.
	k := index.DefaultContext.Neighbours
	if k < 1 {
		t.Skip("the default context holds no neighbours")
	}
	ms := []*memory.Memory{
		turn("T1", "garden chat", 1, "Melanie", "Which flowers did you plant by the porch?", teamA),
		turn("T2", "garden chat", 2, "Caroline", "They're called Peruvian Lilies.", teamA),
	}
	for i := 1; i < k; i++ {
		ms = append(ms, turn(fmt.Sprintf("F%d", i), "garden chat", int64(2+i), "Melanie", fmt.Sprintf("Filler number %d.", i), teamA))
	}
	ms = append(ms,
		turn("T3", "garden chat", int64(k+2), "Melanie", "Lovely, they last for weeks.", teamA),
		turn("T9", "other chat", 1, "Caroline", "We drove to the coast.", teamA),
		mem("N1", "A note about the weather.", teamA))
	put(t, b, teamA, ms...)
	for _, c := range []struct {
		query, id string
		want      bool
	}{
		{"porch flowers", "T2", true},   // the question's words, through its context
		{"peruvian lilies", "T1", true}, // and back
		{"peruvian lilies", "T3", true}, // k turns away
		{"porch flowers", "T3", false},  // k+1 turns away: not a neighbour
		{"coast", "T3", false},          // another episode's words
		{"lilies", "N1", false},         // a memory in no episode has no context
	} {
		if got := bm25Has(t, b, c.query, c.id); got != c.want {
			t.Fatalf("query %q finds %s: %t, want %t (context of %d turns each side)", c.query, c.id, got, c.want, k)
		}
	}
	// Its own words still rank it first.
	if got := ids(legs(t, b, backend.LegQuery{K: 3, Text: "peruvian lilies"}).BM25); len(got) == 0 || got[0] != "T2" {
		t.Fatalf("the turn's own words rank %v, want T2 first", got)
	}
	// Changing the question changes its neighbours' context at once.
	put(t, b, teamA, turn("T1", "garden chat", 1, "Melanie", "Did your dog like the beach?", teamA))
	if bm25Has(t, b, "porch flowers", "T2") || !bm25Has(t, b, "dog beach", "T2") {
		t.Fatal("after the question changed, its neighbour's context did not follow")
	}
	// Deleting a turn brings the turns around it within each other's reach.
	if bm25Has(t, b, "dog beach", "T3") {
		t.Fatal("the last turn is found by the question's words before the delete")
	}
	if _, err := b.Delete(ctx, teamA, []string{"T2"}); err != nil {
		t.Fatal(err)
	}
	if !bm25Has(t, b, "dog beach", "T3") || !bm25Has(t, b, "weeks", "T1") {
		t.Fatal("after a delete, the turns around it are not each other's context")
	}
	// Moving a turn to another episode takes it out of this one's context.
	put(t, b, teamA, turn("T3", "other chat", 2, "Melanie", "Lovely, they last for weeks.", teamA))
	if bm25Has(t, b, "weeks", "T1") || !bm25Has(t, b, "weeks", "T9") {
		t.Fatal("after a move, the old episode keeps the turn's words or the new one lacks them")
	}
	// Episodes are per scope: the same name in another scope is another
	// episode, whose words never reach this one.
	put(t, b, teamB, turn("U1", "other chat", 3, "Zoe", "The zeppelin landed.", teamB))
	if bm25Has(t, b, "zeppelin", "T3") || bm25Has(t, b, "zeppelin", "T9") {
		t.Fatal("an episode of the same name in another scope lends its words")
	}
}

// testEpisodeNeighbours: the memories next to one in its episode, in
// episode order (seq, then occurred_at, then id), from a Neighbourer or
// from a listing of the episode.
func testEpisodeNeighbours(t *testing.T, s suite) {
	b := s.backend(t)
	var ms []*memory.Memory
	for i := range 6 {
		ms = append(ms, turn(fmt.Sprintf("E%d", i+1), "standup", int64(i+1), "user", fmt.Sprintf("turn number %d", i+1), teamA))
	}
	put(t, b, teamA, ms...)
	put(t, b, teamB, turn("E3", "standup", 3, "user", "another team's turn three", teamB))
	want := func(nb backend.Neighbourer, id string, k int, before, after []string) {
		t.Helper()
		bf, af, err := nb.Neighbours(ctx, teamA, id, k)
		if err != nil {
			t.Fatal(err)
		}
		idsOf := func(ms []*memory.Memory) []string {
			out := []string{}
			for _, m := range ms {
				out = append(out, m.ID)
			}
			return out
		}
		if got := idsOf(bf); !reflect.DeepEqual(got, before) {
			t.Fatalf("Neighbours(%s, %d) before = %v, want %v", id, k, got, before)
		}
		if got := idsOf(af); !reflect.DeepEqual(got, after) {
			t.Fatalf("Neighbours(%s, %d) after = %v, want %v", id, k, got, after)
		}
	}
	if got := list(t, b, backend.ListQuery{Filter: memory.Filter{Episode: "standup", Scope: teamA}}); len(got) != 6 {
		t.Fatalf("List of the episode: %v", got)
	}
	want(b, "E3", 1, []string{"E2"}, []string{"E4"})
	want(b, "E1", 2, []string{}, []string{"E2", "E3"})
	want(b, "E6", 3, []string{"E3", "E4", "E5"}, []string{})
	want(b, "E4", 10, []string{"E1", "E2", "E3"}, []string{"E5", "E6"})
	// A turn moved within the episode takes its new place.
	put(t, b, teamA, turn("E1", "standup", 9, "user", "turn number 1, said last", teamA))
	want(b, "E6", 1, []string{"E5"}, []string{"E1"})
}

// testSupersedes: a memory that supersedes another leaves it out of what is
// current, inside the legs; as of an earlier time the older one is current
// and the newer one not yet; nothing is deleted, and the supersession
// follows every write.
func testSupersedes(t *testing.T, s suite) {
	b := s.backend(t)
	y := func(year int) time.Time { return time.Date(year, 6, 1, 0, 0, 0, 0, time.UTC) }
	berlin := mem("01BER", "The user lives in Berlin", teamA)
	berlin.OccurredAt = y(2022)
	paris := mem("01PAR", "The user lives in Paris", teamA)
	paris.OccurredAt, paris.Supersedes = y(2024), "01BER"
	// The superseding memory first, as an import may bring it.
	put(t, b, teamA, paris)
	put(t, b, teamA, berlin)
	query := func(f memory.Filter) []string {
		t.Helper()
		f.Scope = teamA
		res := legs(t, b, backend.LegQuery{Filter: f, K: 10, Text: "user lives", Vector: embedText("user lives"), Model: model})
		got := ids(res.BM25)
		slices.Sort(got)
		vec := ids(res.Vector)
		slices.Sort(vec)
		if !reflect.DeepEqual(got, vec) {
			t.Fatalf("filter %+v: bm25 %v, vector %v: the legs disagree", f, got, vec)
		}
		return got
	}
	at2023, at2025, at2021 := y(2023), y(2025), y(2021)
	for _, c := range []struct {
		name string
		f    memory.Filter
		want []string
	}{
		{"every version", memory.Filter{}, []string{"01BER", "01PAR"}},
		{"current", memory.Filter{Current: true}, []string{"01PAR"}},
		{"as of 2023", memory.Filter{AsOf: &at2023}, []string{"01BER"}},
		{"as of 2025", memory.Filter{AsOf: &at2025}, []string{"01PAR"}},
		{"as of 2021", memory.Filter{AsOf: &at2021}, []string{}},
	} {
		if got := query(c.f); !reflect.DeepEqual(got, c.want) {
			t.Fatalf("%s: %v, want %v", c.name, got, c.want)
		}
		if got := list(t, b, backend.ListQuery{Filter: memory.Filter{Scope: teamA, Current: c.f.Current, AsOf: c.f.AsOf}}); !reflect.DeepEqual(got, c.want) {
			t.Fatalf("%s: List %v, want %v", c.name, got, c.want)
		}
	}
	if got := list(t, b, backend.ListQuery{Filter: memory.Filter{Supersedes: "01BER"}}); !reflect.DeepEqual(got, []string{"01PAR"}) {
		t.Fatalf("List of what supersedes 01BER: %v", got)
	}
	// The derived supersession on the memories a listing returns.
	err := b.List(ctx, backend.ListQuery{Filter: memory.Filter{Scope: teamA}}, func(m *memory.Memory) error {
		var want *memory.Supersession
		if m.ID == "01BER" {
			want = &memory.Supersession{By: "01PAR", At: y(2024)}
		}
		if !reflect.DeepEqual(m.Superseded, want) {
			t.Fatalf("%s: superseded %+v, want %+v", m.ID, m.Superseded, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A superseding memory of another scope supersedes nothing here.
	other := mem("01PAR", "The user lives in Rome", teamB)
	other.OccurredAt, other.Supersedes = y(2020), "01BER"
	put(t, b, teamB, other)
	if got := query(memory.Filter{AsOf: &at2023}); !reflect.DeepEqual(got, []string{"01BER"}) {
		t.Fatalf("another scope's memory superseded this one's: %v", got)
	}
	// Deleting the superseding memory makes the old one current again.
	if _, err := b.Delete(ctx, teamA, []string{"01PAR"}); err != nil {
		t.Fatal(err)
	}
	if got := query(memory.Filter{Current: true}); !reflect.DeepEqual(got, []string{"01BER"}) {
		t.Fatalf("after the superseding memory was deleted: %v", got)
	}
}

// testLegsWindows: with time windows, each leg also returns the best of the
// memories that occurred inside one, however far down they rank overall.
func testLegsWindows(t *testing.T, s suite) {
	b := s.backend(t)
	var ms []*memory.Memory
	for i := range 40 {
		m := mem(fmt.Sprintf("01%02d", i), fmt.Sprintf("quarterly report %s", strings40[i%len(strings40)]), nil)
		m.OccurredAt = time.Date(2024, 1, 1+i, 12, 0, 0, 0, time.UTC)
		ms = append(ms, m)
	}
	// The one of May 2023: its text repeats less of the query, so it ranks last.
	old := mem("09OLD", "report", nil)
	old.Text = "an old report we wrote, quarterly or not, with much more text around it to make it long"
	old.ContentHash = old.ComputeHash()
	old.Embedding.Vector = embedText(old.Text)
	old.OccurredAt = time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	ms = append(ms, old)
	put(t, b, nil, ms...)
	q := backend.LegQuery{K: 5, Text: "quarterly report", Vector: embedText("quarterly report"), Model: model}
	res := legs(t, b, q)
	if slices.Contains(ids(res.BM25), "09OLD") || slices.Contains(ids(res.Vector), "09OLD") {
		t.Fatalf("the test's memory ranks in the top 5 without a window (bm25 %v, vector %v): the fixture tests nothing", ids(res.BM25), ids(res.Vector))
	}
	q.Windows = []memory.TimeWindow{{Phrase: "in May 2023", Since: time.Date(2023, 5, 1, 0, 0, 0, 0, time.UTC), Until: time.Date(2023, 6, 1, 0, 0, 0, 0, time.UTC), Boost: 1.5}}
	res = legs(t, b, q)
	for _, leg := range []struct {
		name string
		hits []backend.Hit
	}{{"bm25", res.BM25}, {"vector", res.Vector}} {
		got := ids(leg.hits)
		if len(got) != 6 || got[5] != "09OLD" {
			t.Fatalf("%s leg with a window: %v, want the best 5 and then 09OLD", leg.name, got)
		}
	}
}

// strings40 vary the window test's texts.
var strings40 = []string{"for the board", "quarterly numbers", "on sales", "for investors", "quarterly again"}
