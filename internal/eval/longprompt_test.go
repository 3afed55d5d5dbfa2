package eval

import (
	"strings"
	"testing"

	"github.com/engram-memory/engram/memory"
)

func TestPadQuestions(t *testing.T) {
	corpus := func(name string, texts ...string) Corpus {
		c := Corpus{Name: name, Cases: []Case{{ID: name + "-q1", Text: "where did " + name + " go?"}, {ID: name + "-q2", Text: "when?"}}}
		for _, s := range texts {
			c.Docs = append(c.Docs, &memory.Memory{Text: s, Speaker: "S"})
		}
		return c
	}
	cases := []struct {
		name  string
		size  int
		first bool
		want  []string // the cases' texts, corpus by corpus
	}{
		{"question last, padded with the next corpus", 40, false, []string{
			"S: b one\nS: b two\n\nwhere did a go?", "S: b two\nS: b three\nS: b one\n\nwhen?",
			"S: a one\nS: a two\n\nwhere did b go?", "S: a two\nS: a one\nS: a two\n\nwhen?"}},
		{"question first", 40, true, []string{
			"where did a go?\n\nS: b one\nS: b two\n", "when?\n\nS: b two\nS: b three\nS: b one\n",
			"where did b go?\n\nS: a one\nS: a two\n", "when?\n\nS: a two\nS: a one\nS: a two\n"}},
		{"one line at least", 1, false, []string{
			"S: b one\n\nwhere did a go?", "S: b two\n\nwhen?", "S: a one\n\nwhere did b go?", "S: a two\n\nwhen?"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds := &Dataset{Corpora: []Corpus{corpus("a", "a one", "a two"), corpus("b", "b one", "b two", "b three")}}
			if err := PadQuestions(ds, c.size, c.first); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, co := range ds.Corpora {
				for _, cs := range co.Cases {
					got = append(got, cs.Text)
					if c.size > 1 && len(cs.Text) > c.size {
						t.Errorf("%q is %d bytes, over %d", cs.Text, len(cs.Text), c.size)
					}
				}
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("padded:\n%q\nwant\n%q", got, c.want)
			}
		})
	}
	for _, bad := range []struct {
		name string
		ds   *Dataset
		size int
	}{
		{"one corpus", &Dataset{Corpora: []Corpus{corpus("a", "x")}}, 100},
		{"zero size", &Dataset{Corpora: []Corpus{corpus("a", "x"), corpus("b", "y")}}, 0},
		{"nothing to pad with", &Dataset{Corpora: []Corpus{corpus("a", "x"), corpus("b", " ")}}, 100},
	} {
		if err := PadQuestions(bad.ds, bad.size, false); err == nil {
			t.Errorf("%s: no error", bad.name)
		}
	}
}

func TestParseLongQuery(t *testing.T) {
	cases := []struct {
		in   string
		want LongQuery
		err  bool
	}{
		{in: "4096/64/512", want: LongQuery{Bytes: 4096, Terms: 64, Window: 512}},
		{in: "2048/32/256/ends", want: LongQuery{Bytes: 2048, Terms: 32, Window: 256, Ends: true}},
		{in: "2048/32/256/ends/wt", want: LongQuery{Bytes: 2048, Terms: 32, Window: 256, Ends: true, WindowTerms: true}},
		{in: "4096/64", err: true},
		{in: "4096/0/512", err: true},
		{in: "4096/x/512", err: true},
		{in: "4096/64/512/ends/ends", err: true},
		{in: "4096/64/512/tail", err: true},
	}
	for _, c := range cases {
		got, err := ParseLongQuery(c.in)
		if (err != nil) != c.err || (err == nil && got != c.want) {
			t.Errorf("ParseLongQuery(%q) = %+v, %v; want %+v (error %t)", c.in, got, err, c.want, c.err)
		}
	}
	m, err := ParseMode("hybrid:long=8192/16/256:w=0.5")
	if err != nil || m.Long != (LongQuery{Bytes: 8192, Terms: 16, Window: 256}) {
		t.Errorf("ParseMode with long= gave %+v, %v", m.Long, err)
	}
	if m, _ := ParseMode("hybrid"); m.Long != DefaultLongQuery {
		t.Errorf("a mode without long= runs with %+v, want recall's %+v", m.Long, DefaultLongQuery)
	}
}
