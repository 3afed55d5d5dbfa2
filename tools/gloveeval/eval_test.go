package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestRank(t *testing.T) {
	store := [][]float32{{1, 0}, nil, {0.6, 0.8}, {0, 1}, {0.6, 0.8}}
	tests := []struct {
		name string
		q    []float32
		k    int
		want []int
	}{
		{"best first, ties by index", []float32{0, 1}, 3, []int{3, 2, 4}},
		{"k beyond store", []float32{1, 0}, 10, []int{0, 2, 4, 3}},
		{"nil query", nil, 3, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := rank(tc.q, store, tc.k); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("rank = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLoadLoCoMoSkips(t *testing.T) {
	const data = `[{"sample_id":"c1","conversation":{"speaker_a":"A","session_2":[{"speaker":"B","dia_id":"D2:1","text":"later"}],
"session_1":[{"speaker":"A","dia_id":"D1:1","text":"hi"}]},
"qa":[{"question":"q1","evidence":["D1:1","D9:9"]},{"question":"q2","evidence":[]},{"question":"q3","evidence":["D:1"]}]}]`
	path := filepath.Join(t.TempDir(), "l.json")
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	convs, skipped, err := loadLoCoMo(path)
	if err != nil {
		t.Fatal(err)
	}
	if skipped != 2 || len(convs) != 1 || len(convs[0].questions) != 1 {
		t.Fatalf("skipped %d, convs %+v", skipped, convs)
	}
	c := convs[0]
	if !reflect.DeepEqual(c.turns, []string{"A: hi", "B: later"}) || !c.gold[0]["D1:1"] || len(c.gold[0]) != 1 {
		t.Fatalf("turns %q gold %v", c.turns, c.gold)
	}
}
