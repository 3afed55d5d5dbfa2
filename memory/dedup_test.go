package memory

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func TestNormalText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"  lead and trail \n", "lead and trail"},
		{"runs \t of\n\n white   space", "runs of white space"},
		{"cafe\u0301", "caf\u00e9"},                           // NFC
		{"Case Kept", "Case Kept"},                            // no folding
		{"\u00a0no-break\u2003em space", "no-break em space"}, // Unicode spaces
		{"", ""},
	}
	for _, c := range cases {
		if got := NormalText(c.in); got != c.want {
			t.Errorf("NormalText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if TextKey("a  b") != TextKey("a b") || TextKey("a b") == TextKey("A b") {
		t.Error("TextKey does not follow NormalText")
	}
}

func TestMergeRepeat(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := at.Add(time.Hour)
	stored := &Memory{ID: "01A", Name: "n", Text: "t", Type: "note", Tags: []string{"a"}, Metadata: json.RawMessage(`{"k":1}`),
		CreatedAt: at, UpdatedAt: at, OccurredAt: at, Scope: map[string]string{"u": "1"}}
	cases := []struct {
		name      string
		repeat    Memory
		typeGiven bool
		want      MergeChanges
		check     func(m *Memory) bool
	}{
		{"nothing new", Memory{Text: "t", Tags: []string{"a"}, Type: "note", Metadata: json.RawMessage(`{ "k": 1 }`)}, false, MergeChanges{}, nil},
		{"tags union", Memory{Text: "t", Tags: []string{"b", "a"}}, false, MergeChanges{Tags: []string{"b"}},
			func(m *Memory) bool { return reflect.DeepEqual(m.Tags, []string{"a", "b"}) }},
		{"favorite", Memory{Text: "t", Favorite: true}, false, MergeChanges{Favorite: true}, func(m *Memory) bool { return m.Favorite }},
		{"metadata overlay", Memory{Text: "t", Metadata: json.RawMessage(`{"k":2,"j":true}`)}, false, MergeChanges{Metadata: []string{"j", "k"}},
			func(m *Memory) bool { return string(m.Metadata) == `{"j":true,"k":2}` }},
		{"type given", Memory{Text: "t", Type: "fact"}, true, MergeChanges{Type: "fact"}, func(m *Memory) bool { return m.Type == "fact" }},
		{"type defaulted is not a change", Memory{Text: "t", Type: "fact"}, false, MergeChanges{}, nil},
		{"name kept", Memory{Text: "t", Name: "other", Source: "s"}, false, MergeChanges{Kept: []string{"name", "source"}}, nil},
		{"occurred_at kept", Memory{Text: "t", CreatedAt: now, OccurredAt: at.Add(-time.Hour)}, false, MergeChanges{Kept: []string{"occurred_at"}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := *stored
			got, ch, err := MergeRepeat(stored, &c.repeat, c.typeGiven, now)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ch, c.want) {
				t.Fatalf("changes %+v, want %+v", ch, c.want)
			}
			if !reflect.DeepEqual(*stored, before) {
				t.Fatal("MergeRepeat changed the stored memory it was given")
			}
			if !c.want.Changed() {
				if got != nil {
					t.Fatalf("nothing changed, but got %+v", got)
				}
				return
			}
			if got == nil || !got.UpdatedAt.Equal(now) || got.ID != "01A" || got.Name != "n" || !c.check(got) {
				t.Fatalf("merged %+v", got)
			}
		})
	}
	if _, _, err := MergeRepeat(stored, &Memory{Text: "t", Metadata: json.RawMessage(`[1]`)}, false, now); err == nil {
		t.Error("metadata that is not an object merged")
	}
}
