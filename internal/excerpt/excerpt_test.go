package excerpt

import (
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/engram-memory/engram/internal/tokenize"
)

var tok = tokenize.New(tokenize.DefaultOptions())

const abstract = "Fractures are common in older adults. Many trials gave calcium alone. " +
	"Vitamin D supplementation reduced hip fracture risk by 16% in adults over 65 taking 800 IU daily. " +
	"Lower doses showed no effect. The authors call for trials in younger people."

func TestPassage(t *testing.T) {
	cases := []struct {
		name, query, text string
		room              int
		want              string
	}{
		{"fits whole", "vitamin", "Vitamin D  helps\nbones.", 40, "Vitamin D helps bones."},
		{"best sentence, cut both ends", "does vitamin d supplementation reduce fracture risk", abstract, 110,
			"…Vitamin D supplementation reduced hip fracture risk by 16% in adults over 65 taking 800 IU daily. Lower…"},
		{"no query: the beginning", "", abstract, 40, "Fractures are common in older adults.…"},
		{"no term in the text: the beginning", "kubernetes ingress", abstract, 40, "Fractures are common in older adults.…"},
		{"the end of the text", "authors younger", abstract, 60, "…The authors call for trials in younger people."},
		{"stemmed terms match", "fracturing supplements", abstract, 50, "…Vitamin D supplementation reduced hip fracture…"},
		{"one long word", "x", strings.Repeat("a", 100), 10, "aaaaaaaaa…"},
		{"a long unspaced run, matched in its later piece", "只读用户", strings.Repeat("很长的句子", 8) + "只读用户", 30, "…子很长的句子很长的句子很长的句子只读用户"},
		{"nothing fits", "x", "abc def", 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := NewQuery(tok, c.query).Passage(c.text, c.room)
			if got != c.want {
				t.Fatalf("Passage = %q\n          want %q", got, c.want)
			}
			if n := utf8.RuneCountInString(got); n > c.room {
				t.Fatalf("%d runes over a room of %d", n, c.room)
			}
		})
	}
}

// naiveBest is best's brute-force twin: every window from every start,
// extended word by word while it fits, scored from scratch.
func naiveBest(pieces []piece, room int) (int, int) {
	bs, be := -1, -1
	var bsc score
	for s := range pieces {
		e := s
		for e < len(pieces) {
			w := 0
			for k := s; k <= e; k++ {
				w += pieces[k].runes
			}
			w += e - s // spaces
			if s > 0 {
				w++
			}
			if e+1 < len(pieces) {
				w++
			}
			if w > room {
				break
			}
			e++
		}
		seen := map[int]bool{}
		sc := score{sentence: pieces[s].sentence, lead: -1}
		for k := s; k < e; k++ {
			if len(pieces[k].terms) > 0 && sc.lead < 0 {
				sc.lead = 0
				for j := s; j < k; j++ {
					sc.lead += pieces[j].runes + 1
				}
			}
			for _, t := range pieces[k].terms {
				seen[t] = true
				sc.occ++
			}
		}
		sc.distinct = len(seen)
		if sc.distinct > 0 && (bs < 0 || sc.better(bsc)) {
			bs, be, bsc = s, e, sc
		}
	}
	return bs, be
}

// TestBestMatchesNaive: the sliding window picks the window the brute force
// does, on random texts and rooms.
func TestBestMatchesNaive(t *testing.T) {
	words := strings.Fields("deploy key vault the kafka. rollback! cache mysql user? a an memory-search.ts 数据库只读用户 x")
	r := rand.New(rand.NewSource(7))
	for i := range 3000 {
		var b strings.Builder
		for range 1 + r.Intn(30) {
			b.WriteString(words[r.Intn(len(words))] + " ")
		}
		text := strings.Join(strings.Fields(b.String()), " ")
		query := words[r.Intn(len(words))] + " " + words[r.Intn(len(words))]
		if i%10 == 0 {
			query = ""
		}
		q := NewQuery(tok, query)
		pieces, n := q.pieces(text)
		room := r.Intn(80)
		gs, ge := q.best(pieces, n, room)
		ws, we := naiveBest(pieces, room)
		if gs != ws || ge != we {
			t.Fatalf("text %q query %q room %d: best [%d,%d), naive [%d,%d)", text, query, room, gs, ge, ws, we)
		}
		if p := q.Passage(text, room); utf8.RuneCountInString(p) > room {
			t.Fatalf("passage %q over a room of %d", p, room)
		}
	}
}

func FuzzPassage(f *testing.F) {
	f.Add("vitamin fracture", abstract, 60)
	f.Add("", "数据库只读用户 配置", 5)
	f.Fuzz(func(t *testing.T, query, text string, room int) {
		if room > 1<<16 || !utf8.ValidString(text) {
			return
		}
		p := NewQuery(tok, query).Passage(text, room)
		if room >= 0 && utf8.RuneCountInString(p) > room {
			t.Fatalf("passage of %d runes over a room of %d", utf8.RuneCountInString(p), room)
		}
	})
}
