package calibrate

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/engram-memory/engram/memory"
)

func TestSentences(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string
	}{
		{"empty", "", nil},
		{"one", "No full stop here", []string{"No full stop here"}},
		{"three", "First one. Second one! Third?", []string{"First one.", "Second one!", "Third?"}},
		{"decimal kept", "Pi is 3.14 today. Yes.", []string{"Pi is 3.14 today.", "Yes."}},
		{"trailing space", "  A b.  C d.  ", []string{"A b.", "C d."}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Sentences(c.in); !slices.Equal(got, c.want) {
				t.Errorf("Sentences(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

var testMems = []*memory.Memory{
	{ID: "two", Text: "The deploy key lives in the ops vault downstairs. Rotate it every ninety days without fail."},
	{ID: "one", Text: "prefers dark themes in every editor and terminal she uses at work"},
	{ID: "short", Text: "espresso, no sugar"},
	{ID: "named", Name: "Standup meeting time moved", Text: "ten thirty on Tuesdays and Thursdays"},
}

func TestMake(t *testing.T) {
	for _, method := range Methods {
		t.Run(method, func(t *testing.T) {
			set := Make(testMems, method, 10, 7)
			again := Make(testMems, method, 10, 7)
			if !slices.Equal(set.Queries, again.Queries) {
				t.Fatal("the same seed drew different pseudo-queries")
			}
			for _, q := range set.Queries {
				if q.Target == "short" {
					t.Errorf("a memory of %d words gave a pseudo-query", len(strings.Fields(testMems[2].Text)))
				}
				if len(strings.Fields(q.Query)) < minQuery {
					t.Errorf("pseudo-query %q is shorter than %d words", q.Query, minQuery)
				}
				e, edited := set.Edited[q.Target]
				switch method {
				case MethodSpan:
					if edited {
						t.Errorf("span edited %s", q.Target)
					}
				case MethodHeldOut:
					if !edited || strings.Contains(e.Text, q.Query) {
						t.Errorf("held-out %q still in %q", q.Query, e.Text)
					}
				case MethodPartial:
					// Every other query word is gone from the memory, so the
					// query is not a substring any more.
					if !edited || strings.Contains(e.Text, q.Query) {
						t.Errorf("partial %q still whole in %q", q.Query, e.Text)
					}
				case MethodName:
					if !edited || e.Name != "" || q.Query != "Standup meeting time moved" {
						t.Errorf("name: query %q, edited %+v", q.Query, e)
					}
				}
				if edited && e.Embedding != nil {
					t.Error("an edited memory keeps the old vector")
				}
			}
			for _, m := range testMems {
				if m.ID == "two" && !strings.HasPrefix(m.Text, "The deploy key") {
					t.Fatal("Make modified its input")
				}
			}
		})
	}
	// A sentence held out of a two-sentence memory is one of its sentences.
	set := Make(testMems[:1], MethodHeldOut, 1, 1)
	if len(set.Queries) != 1 || !slices.Contains(Sentences(testMems[0].Text), set.Queries[0].Query) {
		t.Errorf("held-out query %+v is not one of the sentences", set.Queries)
	}
}

func TestChoose(t *testing.T) {
	cases := []struct {
		name   string
		points []Point
		prior  float64
		want   float64
	}{
		{"best wins when clear", []Point{{0, .40, .01, 0}, {.1, .50, .01, 0}, {1, .45, .01, 0}}, 1, .1},
		{"within one se of best goes to the prior", []Point{{0, .48, .02, 0}, {.1, .50, .02, 0}, {1, .49, .02, 0}}, 1, 1},
		{"within one se, nearest the prior", []Point{{0, .48, .02, 0}, {.3, .50, .02, 0}, {1, .40, .02, 0}}, .5, .3},
		{"no prior goes smaller", []Point{{0, .48, .02, 0}, {.1, .50, .02, 0}, {1, .49, .02, 0}}, math.NaN(), 0},
		{"exact tie goes smaller", []Point{{0, .5, 0, 0}, {.2, .5, 0, 0}}, .1, 0},
		{"order of points does not matter", []Point{{1, .45, .01, 0}, {.1, .50, .01, 0}, {0, .40, .01, 0}}, 0, .1},
		{"empty", nil, 0, math.NaN()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Choose(c.points, c.prior)
			if got != c.want && !(math.IsNaN(got) && math.IsNaN(c.want)) {
				t.Errorf("Choose = %v, want %v", got, c.want)
			}
		})
	}
}

func TestSweep(t *testing.T) {
	set := Set{Method: MethodSpan, Queries: []Pseudo{{"q1", "a"}, {"q2", "b"}, {"q3", "c"}}}
	// At weight 0 every source ranks first; at .5 second; at 1 absent.
	search := func(_ context.Context, q string, w float64) ([]string, error) {
		target := map[string]string{"q1": "a", "q2": "b", "q3": "c"}[q]
		switch {
		case w == 0:
			return []string{target, "x"}, nil
		case w < 1:
			return []string{"x", target}, nil
		}
		return []string{"x"}, nil
	}
	res, err := Sweep(context.Background(), set, []float64{0, .5, 1}, math.NaN(), search)
	if err != nil {
		t.Fatal(err)
	}
	wantMRR := []float64{1, .5, 0}
	for i, p := range res.Points {
		if p.MRR != wantMRR[i] || p.SE != 0 {
			t.Errorf("weight %v: MRR %v ± %v, want %v ± 0", p.Weight, p.MRR, p.SE, wantMRR[i])
		}
	}
	if res.Best != 0 || res.Queries != 3 || res.Points[0].Hit1 != 1 {
		t.Errorf("result %+v", res)
	}

	boom := errors.New("store closed")
	if _, err := Sweep(context.Background(), set, nil, 0, func(context.Context, string, float64) ([]string, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("search error not returned: %v", err)
	}
	if _, err := Sweep(context.Background(), Set{Method: MethodHeldOut}, nil, 0, search); err == nil {
		t.Error("no pseudo-queries must be an error")
	}
	if _, err := Sweep(context.Background(), set, []float64{-1}, 0, search); err == nil {
		t.Error("a negative weight must be an error")
	}
}

func TestReciprocalRank(t *testing.T) {
	ids := []string{"a", "b", "c"}
	for target, want := range map[string]float64{"a": 1, "b": .5, "c": 1.0 / 3, "z": 0} {
		if got := ReciprocalRank(ids, target); got != want {
			t.Errorf("ReciprocalRank(%s) = %v, want %v", target, got, want)
		}
	}
}
