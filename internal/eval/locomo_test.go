package eval

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

const locomoFixture = `[
 {"sample_id": "conv-a",
  "conversation": {
   "speaker_a": "Ann", "speaker_b": "Bob",
   "session_10_date_time": "sometime",
   "session_10": [{"speaker": "Ann", "dia_id": "D10:1", "text": "Ten sessions later."}],
   "session_1_date_time": "1:56 pm on 8 May, 2023",
   "session_1": [
     {"speaker": "Ann", "dia_id": "D1:1", "text": "Hi Bob"},
     {"speaker": "Bob", "dia_id": "D1:2", "text": "I adopted a dog", "blip_caption": "a photo of a puppy", "img_url": ["x"]},
     {"speaker": "Ann", "dia_id": "D1:3", "text": "Nice!"}
   ],
   "session_2_date_time": "10:05 am on 12 June, 2023",
   "session_2": [
     {"speaker": "Bob", "dia_id": "D2:1", "text": "We went hiking"},
     {"speaker": "Ann", "dia_id": "D2:2", "text": "Where?"}
   ]
  },
  "qa": [
   {"question": "What pet did Bob adopt?", "answer": "a dog", "evidence": ["D1:2"], "category": 1},
   {"question": "Is Ann kind?", "answer": "yes", "evidence": [], "category": 3},
   {"question": "What did Bob do?", "answer": 2023, "evidence": ["D1:2; D2:1"], "category": 2},
   {"question": "Where?", "answer": "?", "evidence": ["D:2:2", "D9:9"], "category": 4},
   {"question": "Broken", "answer": "?", "evidence": ["X"], "category": 4},
   {"question": "What did Ann say in session ten?", "evidence": ["D10:1"], "category": 5, "adversarial_answer": "nothing"}
  ],
  "observation": {}, "session_summary": {}, "event_summary": {}
 },
 {"sample_id": "conv-b",
  "conversation": {"speaker_a": "Cy", "speaker_b": "Di",
   "session_1_date_time": "9:00 am on 1 January, 2024",
   "session_1": [{"speaker": "Cy", "dia_id": "D1:1", "text": "Hello"}]},
  "qa": [{"question": "hello?", "answer": "hi", "evidence": ["D1:1"], "category": 4},
         {"question": "What did Cy say on 1 January, 2024?", "answer": "hello", "evidence": ["D1:1"], "category": 2}]
 }
]`

func loadFixture(t testing.TB, opt LoCoMoOptions) *Dataset {
	t.Helper()
	ds, err := ReadLoCoMo(strings.NewReader(locomoFixture), opt)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func TestLoCoMoTurnLevel(t *testing.T) {
	ds := loadFixture(t, DefaultLoCoMoOptions())
	if ds.Name != "locomo-turn" || len(ds.Corpora) != 2 || ds.Skipped != 2 {
		t.Fatalf("name %q corpora %d skipped %d, want locomo-turn 2 2", ds.Name, len(ds.Corpora), ds.Skipped)
	}
	a := ds.Corpora[0]
	var ids []string
	for _, d := range a.Docs {
		ids = append(ids, d.ID)
	}
	if got := strings.Join(ids, " "); got != "D1:1 D1:2 D1:3 D2:1 D2:2 D10:1" {
		t.Errorf("turn ids in order = %q (sessions sort numerically)", got)
	}
	d := a.Docs[1]
	if d.Text != "I adopted a dog" || d.Description != "" || d.Scene != "session_1" || d.Type != "turn" || d.Source != "conv-a" ||
		d.Episode != "session_1" || d.Seq != 2 || d.Speaker != "Bob" || !d.OccurredAt.Equal(time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)) {
		t.Errorf("turn D1:2 = %+v", d)
	}
	if p := loadFixture(t, PlainLoCoMoOptions()).Corpora[0].Docs[1]; p.Text != "Bob: I adopted a dog" || p.Episode != "" || p.Speaker != "" {
		t.Errorf("the plain setup's D1:2 = %+v", p)
	}
	for _, c := range append(a.Cases, ds.Corpora[1].Cases...) {
		want := GroupNoDate
		if strings.Contains(c.Text, "2024") {
			want = GroupDate
		}
		if len(c.Groups) != 1 || c.Groups[0] != want {
			t.Errorf("%q: groups %v, want [%s]", c.Text, c.Groups, want)
		}
	}
	if !d.CreatedAt.IsZero() {
		t.Errorf("D1:2 created %v, want none (stored now, said then)", d.CreatedAt)
	}
	plain := loadFixture(t, PlainLoCoMoOptions()).Corpora[0]
	if want := time.Date(2023, 5, 8, 13, 56, 1, 0, time.UTC); !plain.Docs[1].CreatedAt.Equal(want) {
		t.Errorf("plain D1:2 created %v, want %v (session time + its index in seconds)", plain.Docs[1].CreatedAt, want)
	}
	if !a.Docs[5].OccurredAt.IsZero() || !plain.Docs[5].CreatedAt.IsZero() {
		t.Errorf("unparsable date gave %v, %v", a.Docs[5].OccurredAt, plain.Docs[5].CreatedAt)
	}
	wantCases := []struct {
		id   string
		gold string
		cat  int
	}{
		{"conv-a/q1", "D1:2", 1},
		{"conv-a/q3", "D1:2 D2:1", 2},
		{"conv-a/q4", "D2:2", 4},
		{"conv-a/q6", "D10:1", 5},
	}
	if len(a.Cases) != len(wantCases) {
		t.Fatalf("cases = %+v", a.Cases)
	}
	for i, w := range wantCases {
		c := a.Cases[i]
		if c.ID != w.id || goldString(c.Gold) != w.gold || c.Category != w.cat {
			t.Errorf("case %d = %s %v cat %d, want %s {%s} cat %d", i, c.ID, c.Gold, c.Category, w.id, w.gold, w.cat)
		}
	}
	notes := strings.Join(ds.Notes, "\n")
	for _, want := range []string{"1 questions skipped: empty evidence", "1 questions skipped: no evidence id matches",
		"1 evidence ids matching no turn dropped", "2 malformed evidence entries repaired", "1 session dates not understood"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if ds.Categories[5] != "adversarial" || ds.Metrics[0] != Any5 {
		t.Errorf("categories %v metrics %v", ds.Categories, ds.Metrics)
	}
}

func goldString(g map[string]int) string {
	var ids []string
	for id, v := range g {
		if v > 0 {
			ids = append(ids, id)
		}
	}
	// Sort by session then turn for a stable, readable form.
	for i := range ids {
		for j := i + 1; j < len(ids); j++ {
			if less(ids[j], ids[i]) {
				ids[i], ids[j] = ids[j], ids[i]
			}
		}
	}
	return strings.Join(ids, " ")
}

func less(a, b string) bool {
	num := func(s string) (int, int) {
		s = strings.TrimPrefix(strings.TrimPrefix(s, "session_"), "D")
		x, y, _ := strings.Cut(s, ":")
		i, _ := strconv.Atoi(x)
		j, _ := strconv.Atoi(y)
		return i, j
	}
	ai, aj := num(a)
	bi, bj := num(b)
	return ai < bi || ai == bi && aj < bj
}

func TestLoCoMoOptions(t *testing.T) {
	cases := []struct {
		name     string
		opt      LoCoMoOptions
		turn     int // index into conv-a's docs
		wantText string
		wantDesc string
	}{
		{"no speaker", LoCoMoOptions{}, 1, "I adopted a dog", ""},
		{"captions", LoCoMoOptions{WithSpeaker: true, WithCaptions: true}, 1, "Bob: I adopted a dog [photo: a photo of a puppy]", ""},
		{"date", LoCoMoOptions{WithSpeaker: true, WithDate: true}, 1, "Bob: I adopted a dog", "1:56 pm on 8 May, 2023"},
		{"neighbours", LoCoMoOptions{WithSpeaker: true, Neighbours: 1}, 1, "Bob: I adopted a dog", "Ann: Hi Bob | Ann: Nice!"},
		{"neighbours stay in the session", LoCoMoOptions{WithSpeaker: true, Neighbours: 5}, 3, "Bob: We went hiking", "Ann: Where?"},
		{"everything", LoCoMoOptions{WithSpeaker: true, WithDate: true, WithCaptions: true, Neighbours: 1}, 0, "Ann: Hi Bob",
			"1:56 pm on 8 May, 2023 | Bob: I adopted a dog [photo: a photo of a puppy]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := loadFixture(t, tc.opt).Corpora[0].Docs[tc.turn]
			if d.Text != tc.wantText || d.Description != tc.wantDesc {
				t.Errorf("text %q desc %q, want %q and %q", d.Text, d.Description, tc.wantText, tc.wantDesc)
			}
		})
	}
}

// TestLoCoMoConversations: Skip and Conversations pick a part of the file,
// as a held-out measure does.
func TestLoCoMoConversations(t *testing.T) {
	all := loadFixture(t, DefaultLoCoMoOptions())
	tests := []struct {
		name        string
		skip, keep  int
		wantCorpora []string
	}{
		{"all", 0, 0, []string{all.Corpora[0].Name, all.Corpora[1].Name}},
		{"first", 0, 1, []string{all.Corpora[0].Name}},
		{"the rest", 1, 0, []string{all.Corpora[1].Name}},
		{"skip then keep", 1, 1, []string{all.Corpora[1].Name}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opt := DefaultLoCoMoOptions()
			opt.Skip, opt.Conversations = tc.skip, tc.keep
			var got []string
			for _, c := range loadFixture(t, opt).Corpora {
				got = append(got, c.Name)
			}
			if !slices.Equal(got, tc.wantCorpora) {
				t.Errorf("corpora %v, want %v", got, tc.wantCorpora)
			}
		})
	}
	for _, skip := range []int{-1, 2, 5} {
		if _, err := ReadLoCoMo(strings.NewReader(locomoFixture), LoCoMoOptions{Skip: skip}); err == nil {
			t.Errorf("Skip %d of 2 conversations accepted", skip)
		}
	}
}

func TestLoCoMoSessionLevel(t *testing.T) {
	ds := loadFixture(t, LoCoMoOptions{Level: LevelSession, WithSpeaker: true, WithDate: true, Conversations: 1})
	if ds.Name != "locomo-session" || len(ds.Corpora) != 1 {
		t.Fatalf("name %q corpora %d, want locomo-session and 1 (Conversations: 1)", ds.Name, len(ds.Corpora))
	}
	c := ds.Corpora[0]
	if len(c.Docs) != 3 || c.Docs[0].ID != "session_1" || c.Docs[2].ID != "session_10" {
		t.Fatalf("session docs = %v", c.Docs)
	}
	s1 := c.Docs[0]
	if s1.Text != "Ann: Hi Bob\nBob: I adopted a dog\nAnn: Nice!" || s1.Description != "1:56 pm on 8 May, 2023" || s1.Type != "session" {
		t.Errorf("session_1 = %+v", s1)
	}
	want := []string{"session_1", "session_1 session_2", "session_2", "session_10"}
	for i, w := range want {
		if got := goldString(c.Cases[i].Gold); got != w {
			t.Errorf("case %s gold {%s}, want {%s}", c.Cases[i].ID, got, w)
		}
	}
}

func TestLoCoMoErrors(t *testing.T) {
	cases := []struct {
		name string
		data string
		opt  LoCoMoOptions
		want string
	}{
		{"bad level", locomoFixture, LoCoMoOptions{Level: "utterance"}, "level"},
		{"negative neighbours", locomoFixture, LoCoMoOptions{Neighbours: -1}, "negative"},
		{"not json", "{", LoCoMoOptions{}, "decode locomo"},
		{"not a list", `{"sample_id": "x"}`, LoCoMoOptions{}, "decode locomo"},
		{"session not a list", `[{"sample_id": "x", "conversation": {"session_1": "hello"}, "qa": []}]`, LoCoMoOptions{}, "x: session_1"},
		{"date not a string", `[{"sample_id": "x", "conversation": {"session_1": [], "session_1_date_time": 5}, "qa": []}]`, LoCoMoOptions{}, "date_time"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadLoCoMo(strings.NewReader(tc.data), tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	if _, err := LoadLoCoMo("/nonexistent/locomo.json", LoCoMoOptions{}); err == nil {
		t.Error("missing file: no error")
	}
}

func FuzzReadLoCoMo(f *testing.F) {
	f.Add(locomoFixture, 0, false)
	f.Add(`[{"conversation": {"session_1": [{"dia_id": "D1:1", "text": ""}]}, "qa": [{"evidence": ["D1:1"]}]}]`, 2, true)
	f.Fuzz(func(t *testing.T, data string, neighbours int, session bool) {
		opt := LoCoMoOptions{Neighbours: abs(neighbours) % 4, WithSpeaker: true, WithDate: true, WithCaptions: true}
		if session {
			opt.Level = LevelSession
		}
		ds, err := ReadLoCoMo(strings.NewReader(data), opt)
		if err != nil {
			return
		}
		for _, c := range ds.Corpora {
			ids := map[string]bool{}
			for _, d := range c.Docs {
				if d.ID == "" || strings.TrimSpace(d.Text) == "" || ids[d.ID] {
					t.Fatalf("bad memory %+v", d)
				}
				ids[d.ID] = true
			}
			for _, cs := range c.Cases {
				if len(cs.Gold) == 0 {
					t.Fatalf("case %s without gold", cs.ID)
				}
				for id := range cs.Gold {
					if !ids[id] {
						t.Fatalf("case %s: gold %q is no memory", cs.ID, id)
					}
				}
			}
		}
	})
}
