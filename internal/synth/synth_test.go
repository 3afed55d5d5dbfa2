package synth

import (
	"reflect"
	"strings"
	"testing"
)

func small(seed uint64) *Corpus { return New(Config{Seed: seed, Dim: 32, Vocab: 3000, Topics: 4}) }

func TestDeterministic(t *testing.T) {
	a, b := small(7), small(7)
	for i := range 50 {
		ma, mb := a.Memory(i), b.Memory(i)
		if !reflect.DeepEqual(ma, mb) {
			t.Fatalf("memory %d differs:\n%+v\n%+v", i, ma, mb)
		}
		qa, ta := a.Query(i, 1000)
		qb, tb := b.Query(i, 1000)
		if qa != qb || ta != tb {
			t.Fatalf("query %d differs: %q→%s vs %q→%s", i, qa, ta, qb, tb)
		}
		if !reflect.DeepEqual(a.Vector(ma.Text), b.Vector(mb.Text)) {
			t.Fatalf("vector of memory %d differs", i)
		}
	}
	// Order does not matter: memory 40 alone equals memory 40 after the others.
	if !reflect.DeepEqual(small(7).Memory(40), a.Memory(40)) {
		t.Fatal("memory 40 depends on generation order")
	}
	if reflect.DeepEqual(small(8).Memory(3), a.Memory(3)) {
		t.Fatal("different seeds gave the same memory")
	}
}

func TestMemoryShape(t *testing.T) {
	c := small(1)
	named, idents := 0, 0
	for i := range 500 {
		m := c.Memory(i)
		if m.ID != ID(i) || m.Text == "" || m.Type == "" || m.CreatedAt.IsZero() || m.Scope["user"] == "" {
			t.Fatalf("memory %d incomplete: %+v", i, m)
		}
		if err := m.Normalize(); err != nil {
			t.Fatalf("memory %d invalid: %v", i, err)
		}
		if m.Name != "" {
			named++
		}
		if strings.ContainsAny(m.Text, "_") {
			idents++
		}
	}
	if named < 100 || named > 300 || idents < 50 {
		t.Errorf("of 500 memories %d named and %d with an identifier", named, idents)
	}
}

func TestQueryFindsWordsOfTarget(t *testing.T) {
	c := small(2)
	for i := range 100 {
		q, target := c.Query(i, 300)
		m := c.Memory(mustIndex(t, target))
		have := map[string]bool{}
		for _, w := range Words(m.Name + " " + m.Text) {
			have[w] = true
		}
		shared := 0
		for _, w := range Words(q) {
			if have[w] {
				shared++
			}
		}
		// Every word but a possible added common one comes from the target.
		if n := len(Words(q)); shared < 1 || shared < n-1 {
			t.Errorf("query %d %q shares %d words with %s", i, q, shared, target)
		}
	}
}

func mustIndex(t *testing.T, id string) int {
	t.Helper()
	n := 0
	for _, ch := range strings.TrimPrefix(id, "m") {
		n = n*10 + int(ch-'0')
	}
	if ID(n) != id {
		t.Fatalf("bad id %q", id)
	}
	return n
}

func TestVector(t *testing.T) {
	c := small(3)
	tests := []struct {
		name string
		text string
		nil_ bool
	}{
		{"empty", "", true},
		{"punctuation", " .,;- ", true},
		{"known words", c.Memory(0).Text, false},
		{"unknown token", "ERR_NOT_A_WORD_42", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := c.Vector(tt.text)
			if (v == nil) != tt.nil_ {
				t.Fatalf("nil = %v, want %v", v == nil, tt.nil_)
			}
			if v == nil {
				return
			}
			var ss float64
			for _, x := range v {
				ss += float64(x) * float64(x)
			}
			if len(v) != 32 || ss < 0.999 || ss > 1.001 {
				t.Fatalf("len %d, squared norm %v", len(v), ss)
			}
		})
	}
}

// TestClustered: memories about one topic are closer to each other than to
// memories about another, on average.
func TestClustered(t *testing.T) {
	c := small(4)
	byTopic := map[int][][]float32{}
	for i := range 400 {
		r := c.rng(uint64(i), 1)
		topic := r.IntN(c.cfg.Topics) // Memory's first draw
		byTopic[topic] = append(byTopic[topic], c.Vector(c.Memory(i).Text))
	}
	var same, diff float64
	var ns, nd int
	for ta, va := range byTopic {
		for tb, vb := range byTopic {
			for i := 0; i < min(len(va), 20); i++ {
				for j := 0; j < min(len(vb), 20); j++ {
					if ta == tb && i == j {
						continue
					}
					d := dot(va[i], vb[j])
					if ta == tb {
						same, ns = same+d, ns+1
					} else {
						diff, nd = diff+d, nd+1
					}
				}
			}
		}
	}
	if same/float64(ns) < diff/float64(nd)+0.1 {
		t.Errorf("mean cosine within topics %.3f, across %.3f: not clustered", same/float64(ns), diff/float64(nd))
	}
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestWords(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"Hello, World.", "hello world"},
		{"tasks_claim memory-search.ts v1.2.3", "tasks_claim memory search ts v1 2 3"},
		{"ERR_CONN_RESET!", "err_conn_reset"},
	}
	for _, tt := range tests {
		if got := strings.Join(Words(tt.in), " "); got != tt.want {
			t.Errorf("Words(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
