package memory

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestEpisodeID(t *testing.T) {
	long := strings.Repeat("x", 120)
	for _, c := range []struct {
		name, episode string
		seq           int64
		want          string // "#hash" means a hashed id ending in the seq
	}{
		{"plain", "chat-7", 12, "chat-7:12"},
		{"no seq", "chat-7", 0, ""},
		{"no episode", "", 3, ""},
		{"space", "chat 7", 3, "#:3"},
		{"too long with the seq", long, 1234567890, "#:1234567890"},
		{"unicode", "会话", 1, "会话:1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := EpisodeID(c.episode, c.seq)
			if strings.HasPrefix(c.want, "#") {
				if !strings.HasPrefix(got, "ep-") || !strings.HasSuffix(got, c.want[1:]) || CheckID(got) != nil {
					t.Fatalf("EpisodeID(%q, %d) = %q, want a valid hashed id ending %q", c.episode, c.seq, got, c.want[1:])
				}
				return
			}
			if got != c.want {
				t.Fatalf("EpisodeID(%q, %d) = %q, want %q", c.episode, c.seq, got, c.want)
			}
		})
	}
	if EpisodeID("chat 7", 3) == EpisodeID("chat 8", 3) {
		t.Fatal("two episodes share an id")
	}
}

func TestNormalizeEpisode(t *testing.T) {
	for _, c := range []struct {
		name string
		m    Memory
		err  string // "" for valid
	}{
		{"turn", Memory{Text: "a", Episode: "chat", Seq: 3, Speaker: " Caroline "}, ""},
		{"no episode", Memory{Text: "a"}, ""},
		{"seq needs episode", Memory{Text: "a", Seq: 1}, "needs an episode"},
		{"negative seq", Memory{Text: "a", Episode: "c", Seq: -1}, "outside 0"},
		{"seq too large", Memory{Text: "a", Episode: "c", Seq: MaxSeq + 1}, "outside 0"},
		{"episode spaces", Memory{Text: "a", Episode: "c "}, "whitespace"},
		{"episode control", Memory{Text: "a", Episode: "c\x01"}, "control"},
		{"episode too long", Memory{Text: "a", Episode: strings.Repeat("e", MaxEpisodeLength+1)}, "longer"},
		{"speaker too long", Memory{Text: "a", Speaker: strings.Repeat("s", MaxSpeakerLength+1)}, "longer"},
		{"speaker control", Memory{Text: "a", Speaker: "a\nb"}, "control"},
		{"supersedes itself", Memory{ID: "x", Text: "a", Supersedes: "x"}, "itself"},
		{"supersedes a bad id", Memory{Text: "a", Supersedes: "has space"}, "whitespace"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := c.m
			err := m.Normalize()
			if c.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if m.Speaker != strings.TrimSpace(c.m.Speaker) {
					t.Fatalf("speaker %q not trimmed", m.Speaker)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("Normalize: %v, want an invalid-input error with %q", err, c.err)
			}
		})
	}
}

func TestCurrent(t *testing.T) {
	y := func(year int) time.Time { return time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC) }
	m := Memory{OccurredAt: y(2020), Superseded: &Supersession{By: "b", At: y(2023)}}
	plain := Memory{OccurredAt: y(2020)}
	for _, c := range []struct {
		name string
		m    Memory
		asOf *time.Time
		want bool
	}{
		{"superseded, now", m, nil, false},
		{"not superseded, now", plain, nil, true},
		{"before it occurred", m, ptrTime(y(2019)), false},
		{"the day it occurred", m, ptrTime(y(2020)), true},
		{"before its successor", m, ptrTime(y(2022)), true},
		{"the day its successor occurred", m, ptrTime(y(2023)), false},
		{"never superseded, later", plain, ptrTime(y(2030)), true},
	} {
		if got := c.m.Current(c.asOf); got != c.want {
			t.Errorf("%s: Current = %t, want %t", c.name, got, c.want)
		}
	}
}

func ptrTime(t time.Time) *time.Time { return &t }

func TestEpisodeOrder(t *testing.T) {
	at := time.Date(2023, 5, 8, 0, 0, 0, 0, time.UTC)
	a := &Memory{ID: "b", Seq: 1, OccurredAt: at}
	b := &Memory{ID: "a", Seq: 2, OccurredAt: at.Add(-time.Hour)}
	c := &Memory{ID: "c", Seq: 2, OccurredAt: at.Add(-time.Hour)}
	d := &Memory{ID: "a", Seq: 2, OccurredAt: at}
	for _, p := range [][2]*Memory{{a, b}, {b, c}, {c, d}, {b, d}} {
		if EpisodeOrder(p[0], p[1]) >= 0 || EpisodeOrder(p[1], p[0]) <= 0 {
			t.Fatalf("%+v does not come before %+v", p[0], p[1])
		}
	}
	if EpisodeOrder(a, a) != 0 {
		t.Fatal("a memory is not equal to itself")
	}
}
