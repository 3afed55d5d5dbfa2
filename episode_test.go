package engram_test

import (
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/backend/sqlite"
)

// verifyIndex checks a SQLite store's index against what its memories say.
func verifyIndex(t testing.TB, db *engram.DB) {
	t.Helper()
	if _, err := db.Search(ctx, engram.Query{Query: "sync", NoRecord: true}); err != nil { // catch up first
		t.Fatal(err)
	}
	if err := db.Backend().(*sqlite.Backend).VerifyIndex(); err != nil {
		t.Fatal(err)
	}
}

// TestEpisodeIDs: a turn given without an id takes EPISODE:SEQ, so adding it
// again replaces it; a turn said twice is two turns, never merged.
func TestEpisodeIDs(t *testing.T) {
	db := openTest(t, engram.Options{NoEmbedder: true})
	at := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	res, err := db.Add(ctx,
		&engram.Memory{Text: "ok", Episode: "chat 7", Seq: 1, Speaker: "user", OccurredAt: at},
		&engram.Memory{Text: "ok", Episode: "chat 7", Seq: 2, Speaker: "assistant", OccurredAt: at},
		&engram.Memory{Text: "ok", Episode: "chat-7", Seq: 3})
	if err != nil {
		t.Fatal(err)
	}
	// "chat 7" cannot stand in an id (a space): its hash does.
	if res.IDs[2] != "chat-7:3" || !strings.HasPrefix(res.IDs[0], "ep-") || res.IDs[1] != strings.TrimSuffix(res.IDs[0], ":1")+":2" {
		t.Fatalf("ids %v", res.IDs)
	}
	if len(res.Merged) != 0 {
		t.Fatalf("turns of an episode were merged: %+v", res.Merged)
	}
	again, err := db.Add(ctx, &engram.Memory{Text: "okay then", Episode: "chat-7", Seq: 3})
	if err != nil || again.IDs[0] != "chat-7:3" {
		t.Fatalf("adding the turn again: %+v, %v", again, err)
	}
	if n := db.Count(); n != 3 {
		t.Fatalf("%d memories after adding a turn again, want 3", n)
	}
	m, err := db.Get(ctx, "chat-7:3")
	if err != nil || m.Text != "okay then" {
		t.Fatalf("the turn added again: %+v, %v", m, err)
	}
	for _, c := range []struct {
		name string
		m    engram.Memory
		want string
	}{
		{"seq without episode", engram.Memory{Text: "x", Seq: 2}, "needs an episode"},
		{"negative seq", engram.Memory{Text: "x", Episode: "e", Seq: -1}, "outside 0"},
		{"episode with spaces around", engram.Memory{Text: "x", Episode: " e"}, "whitespace"},
		{"supersedes itself", engram.Memory{ID: "a", Text: "x", Supersedes: "a"}, "itself"},
		{"supersedes nothing", engram.Memory{Text: "x", Supersedes: "missing"}, "no memory has that id"},
	} {
		if _, err := db.Add(ctx, &c.m); !errors.Is(err, engram.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an invalid-input error with %q", c.name, err, c.want)
		}
	}
}

// TestAddEpisode: a conversation in one call, each turn at its position;
// the same conversation again (grown by a turn) writes only what is new.
func TestAddEpisode(t *testing.T) {
	db := openTest(t, engram.Options{})
	day := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	msgs := []engram.Message{
		{Speaker: "Melanie", Text: "Which flowers did you plant by the porch?", OccurredAt: day},
		{Speaker: "Caroline", Text: "They're called Peruvian Lilies.", OccurredAt: day},
	}
	res, err := db.AddEpisode(ctx, engram.Episode{Episode: "garden", Messages: msgs})
	if err != nil || !reflect.DeepEqual(res.IDs, []string{"garden:1", "garden:2"}) || res.Embedded != 2 {
		t.Fatalf("AddEpisode: %+v, %v", res, err)
	}
	msgs = append(msgs, engram.Message{Speaker: "Melanie", Text: "Lovely.", OccurredAt: day})
	res, err = db.AddEpisode(ctx, engram.Episode{Episode: "garden", Messages: msgs})
	if err != nil || len(res.IDs) != 3 || res.Embedded != 1 {
		t.Fatalf("the grown conversation: %+v, %v (want 3 ids, 1 embedded: the new turn only)", res, err)
	}
	if n := db.Count(); n != 3 {
		t.Fatalf("%d memories, want 3", n)
	}
	page, err := db.List(ctx, engram.ListOptions{Filter: engram.Filter{Episode: "garden"}, Order: engram.OrderSeq})
	if err != nil {
		t.Fatal(err)
	}
	var speakers []string
	for _, m := range page.Memories {
		speakers = append(speakers, fmt.Sprintf("%d %s", m.Seq, m.Speaker))
	}
	if want := []string{"1 Melanie", "2 Caroline", "3 Melanie"}; !reflect.DeepEqual(speakers, want) {
		t.Fatalf("the episode in order: %v, want %v", speakers, want)
	}
	// The answer turn is found through the question next to it, and comes
	// with its neighbours when asked.
	resp := search(t, db, engram.Query{Query: "which flowers by the porch", Mode: "bm25", Neighbours: 1, NoRecord: true})
	var answer *engram.Result
	for i := range resp.Results {
		if resp.Results[i].ID == "garden:2" {
			answer = &resp.Results[i]
		}
	}
	if answer == nil {
		t.Fatalf("the answer turn is not found: %v", ids(resp))
	}
	var around []string
	for _, n := range answer.Neighbours {
		around = append(around, fmt.Sprintf("%d %s", n.Offset, n.ID))
	}
	if want := []string{"-1 garden:1", "1 garden:3"}; !reflect.DeepEqual(around, want) {
		t.Fatalf("neighbours %v, want %v", around, want)
	}
	for _, bad := range []engram.Episode{
		{Messages: msgs},
		{Episode: "garden"},
		{Episode: "garden", Messages: []engram.Message{{Text: "a", Seq: 2}, {Text: "b", Seq: 2}}},
		{Episode: "garden", Messages: msgs, FirstSeq: -4},
	} {
		if _, err := db.AddEpisode(ctx, bad); !errors.Is(err, engram.ErrInvalid) {
			t.Errorf("AddEpisode(%+v): %v, want ErrInvalid", bad, err)
		}
	}
}

// TestSupersedesAndHistory: what is current by default, what was current
// then with as_of, every version in History, nothing deleted.
func TestSupersedesAndHistory(t *testing.T) {
	db := openTest(t, engram.Options{NoEmbedder: true})
	y := func(year int) time.Time { return time.Date(year, 6, 1, 0, 0, 0, 0, time.UTC) }
	add(t, db, &engram.Memory{ID: "berlin", Text: "The user lives in Berlin", OccurredAt: y(2020)})
	add(t, db, &engram.Memory{ID: "paris", Text: "The user lives in Paris", OccurredAt: y(2023), Supersedes: "berlin"})
	add(t, db, &engram.Memory{ID: "lisbon", Text: "The user lives in Lisbon", OccurredAt: y(2025), Supersedes: "paris"})
	where := func(q engram.Query) []string {
		q.Query, q.NoRecord = "where does the user live", true
		got := ids(search(t, db, q))
		slices.Sort(got)
		return got
	}
	at2021, at2024 := y(2021), y(2024)
	for _, c := range []struct {
		name string
		q    engram.Query
		want []string
	}{
		{"current", engram.Query{}, []string{"lisbon"}},
		{"as of 2021", engram.Query{Filter: engram.Filter{AsOf: &at2021}}, []string{"berlin"}},
		{"as of 2024", engram.Query{Filter: engram.Filter{AsOf: &at2024}}, []string{"paris"}},
		{"every version", engram.Query{IncludeSuperseded: true}, []string{"berlin", "lisbon", "paris"}},
	} {
		if got := where(c.q); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	resp := search(t, db, engram.Query{Query: "berlin", IncludeSuperseded: true, NoRecord: true})
	if len(resp.Results) != 1 || resp.Results[0].SupersededBy != "paris" {
		t.Fatalf("a superseded result names its successor: %+v", resp.Results)
	}
	for _, id := range []string{"berlin", "paris", "lisbon"} {
		vs, err := db.History(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range vs {
			got = append(got, fmt.Sprintf("%s %t %s", v.ID, v.Current, v.SupersededBy))
		}
		if want := []string{"berlin false paris", "paris false lisbon", "lisbon true "}; !reflect.DeepEqual(got, want) {
			t.Fatalf("History(%s) = %v, want %v", id, got, want)
		}
	}
	if _, err := db.History(ctx, "nope"); !errors.Is(err, engram.ErrNotFound) {
		t.Fatalf("History of a missing id: %v", err)
	}
	// A briefing says what is true now.
	b, err := db.Brief(ctx, engram.BriefOptions{})
	if err != nil || len(b.Items) != 1 || b.Items[0].ID != "lisbon" {
		t.Fatalf("brief: %+v, %v", b, err)
	}
}

// TestDatesInQueries: a date phrase boosts what occurred inside its window,
// says so, and hides nothing.
func TestDatesInQueries(t *testing.T) {
	db := openTest(t, engram.Options{NoEmbedder: true})
	add(t, db,
		&engram.Memory{ID: "may", Text: "Deborah went to a yoga retreat", OccurredAt: time.Date(2023, 5, 20, 10, 0, 0, 0, time.UTC)},
		&engram.Memory{ID: "feb", Text: "Deborah went to a yoga retreat with her mother, a long one", OccurredAt: time.Date(2023, 2, 9, 10, 0, 0, 0, time.UTC)},
	)
	plain := search(t, db, engram.Query{Query: "What did Deborah do at the retreat?", NoRecord: true})
	dated := search(t, db, engram.Query{Query: "What did Deborah do at the retreat on 9 February, 2023?", NoRecord: true})
	if ids(plain)[0] != "may" || ids(dated)[0] != "feb" || len(dated.Results) != 2 {
		t.Fatalf("without a date %v, with one %v; want may first, then feb first with both", ids(plain), ids(dated))
	}
	if len(dated.Time) != 1 || dated.Time[0].Phrase != "on 9 February, 2023" || dated.Results[0].Explain.Boosts.Time <= 1 {
		t.Fatalf("the response does not say which phrase boosted what: %+v, %+v", dated.Time, dated.Results[0].Explain.Boosts)
	}
	off := search(t, db, engram.Query{Query: "What did Deborah do at the retreat on 9 February, 2023?", NoDates: true, NoRecord: true})
	if len(off.Time) != 0 || off.Results[0].Explain.Boosts.Time != 0 {
		t.Fatalf("no_dates still read a date: %+v", off.Time)
	}
	now := time.Date(2023, 5, 25, 0, 0, 0, 0, time.UTC)
	rel := search(t, db, engram.Query{Query: "Deborah's retreat last week", Now: &now, NoRecord: true})
	if len(rel.Time) != 1 || ids(rel)[0] != "may" {
		t.Fatalf("last week, from 25 May 2023: %+v %v", rel.Time, ids(rel))
	}
}

// TestRaceEpisodeContext: writers on two handles of one file add, change,
// move and delete turns of the same episodes at once, round after round;
// after each round both handles' indexes hold exactly the context their
// memories say (every memory's neighbours' words, episode order,
// supersession), and a fresh rebuild agrees with them.
func TestRaceEpisodeContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "race.db")
	open := func() *engram.DB {
		db, err := engram.Open(ctx, path, engram.Options{NoEmbedder: true, SQLite: sqlite.Options{SnapshotMinMemories: -1}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	a, b := open(), open()
	words := []string{"lilies", "porch", "beach", "dog", "coast", "yoga", "retreat", "paint", "sunrise", "camping"}
	writer := func(db *engram.DB, r *rand.Rand) func() {
		return func() {
			for range 4 {
				ep := fmt.Sprintf("chat %d", r.Intn(2))
				seq := int64(1 + r.Intn(8))
				id := fmt.Sprintf("t%d", r.Intn(12))
				switch r.Intn(5) {
				case 0:
					_, _ = db.Delete(ctx, id)
				case 1:
					text := words[r.Intn(len(words))] + " " + words[r.Intn(len(words))]
					_, _ = db.Update(ctx, id, engram.Patch{Text: &text})
				case 2:
					_, _ = db.Update(ctx, id, engram.Patch{Episode: &ep, Seq: &seq})
				default:
					m := &engram.Memory{ID: id, Text: words[r.Intn(len(words))] + " and " + words[r.Intn(len(words))],
						Episode: ep, Seq: seq, Speaker: []string{"user", "assistant"}[r.Intn(2)]}
					if r.Intn(4) == 0 {
						m.Supersedes = fmt.Sprintf("t%d", r.Intn(12))
					}
					_, _ = db.Add(ctx, m) // supersedes may name a missing memory: refused, fine
				}
			}
		}
	}
	ra, rb := rand.New(rand.NewSource(1)), rand.New(rand.NewSource(2))
	for round := range raceRounds {
		both(writer(a, ra), writer(b, rb))
		for _, db := range []*engram.DB{a, b} {
			verifyIndex(t, db)
		}
		if round%50 == 49 {
			fresh, err := engram.Open(ctx, path, engram.Options{NoEmbedder: true, SQLite: sqlite.Options{NoSnapshot: true}})
			if err != nil {
				t.Fatal(err)
			}
			verifyIndex(t, fresh)
			for _, q := range words {
				want := ids(search(t, fresh, engram.Query{Query: q, Mode: "bm25", Limit: 50, NoRecord: true}))
				for _, db := range []*engram.DB{a, b} {
					if got := ids(search(t, db, engram.Query{Query: q, Mode: "bm25", Limit: 50, NoRecord: true})); !reflect.DeepEqual(got, want) {
						t.Fatalf("round %d: %q finds %v, a rebuild %v", round, q, got, want)
					}
				}
			}
			fresh.Close()
		}
	}
}

// TestContextNeighboursOption: how far a turn's context reaches is the
// store's to choose: none, one, or the default two.
func TestContextNeighboursOption(t *testing.T) {
	for _, c := range []struct {
		n          int
		near, far2 bool // the answer found by the question's words; the turn two after it
	}{{-1, false, false}, {1, true, false}, {0, true, true}} {
		db, err := engram.Open(ctx, filepath.Join(t.TempDir(), "c.db"), engram.Options{NoEmbedder: true, SQLite: sqlite.Options{ContextNeighbours: c.n}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = db.AddEpisode(ctx, engram.Episode{Episode: "garden", Messages: []engram.Message{
			{Text: "Which flowers did you plant by the porch?"}, {Text: "They're called Peruvian Lilies."},
			{Text: "Lovely."}, {Text: "They last for weeks."},
		}})
		if err != nil {
			t.Fatal(err)
		}
		got := ids(search(t, db, engram.Query{Query: "porch flowers", Mode: "bm25", NoRecord: true}))
		if slices.Contains(got, "garden:2") != c.near || slices.Contains(got, "garden:3") != c.far2 {
			t.Errorf("ContextNeighbours %d: %v", c.n, got)
		}
		db.Close()
	}
}

// TestNeighboursByListing: on a backend without backend.Neighbourer the
// engine lists the episode itself, and attaches the same neighbours as the
// built-in backend's index does.
func TestNeighboursByListing(t *testing.T) {
	b, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "l.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := engram.OpenBackend(ctx, struct{ backend.Backend }{b}, engram.Options{NoEmbedder: true})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	var msgs []engram.Message
	for i := range 6 {
		msgs = append(msgs, engram.Message{Speaker: "user", Text: fmt.Sprintf("turn %d about the harbour", i+1)})
	}
	if _, err := plain.AddEpisode(ctx, engram.Episode{Episode: "walk", Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	// The same store through its own Neighbourer.
	own, err := engram.OpenBackend(ctx, b, engram.Options{NoEmbedder: true})
	if err != nil {
		t.Fatal(err)
	}
	neighbours := func(db *engram.DB) map[string][]string {
		resp := search(t, db, engram.Query{Query: "harbour", Mode: "bm25", Neighbours: 2, NoRecord: true})
		out := map[string][]string{}
		for _, r := range resp.Results {
			for _, n := range r.Neighbours {
				out[r.ID] = append(out[r.ID], fmt.Sprintf("%+d %s", n.Offset, n.ID))
			}
		}
		return out
	}
	got, want := neighbours(plain), neighbours(own)
	if len(got) != 6 || !reflect.DeepEqual(got, want) {
		t.Fatalf("neighbours by listing %v, by the index %v", got, want)
	}
	if w := want["walk:1"]; !reflect.DeepEqual(w, []string{"+1 walk:2", "+2 walk:3"}) {
		t.Fatalf("walk:1's neighbours %v", w)
	}
}
