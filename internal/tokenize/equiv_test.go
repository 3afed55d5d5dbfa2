package tokenize

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// pieces are the fragments random texts are made of: ASCII of every class, and the
// non-ASCII cases normalisation must handle.
var pieces = []string{
	"a", "Z", "q", "X", "e", "s", "7", "0", "_", "-", "--", ".", "/", "\\", "@", "=", ":", "+", "#", "&",
	"'", "'s", " ", " ", "\t", "\n", ",", "!", "(", ")", "*", "`",
	"the", "Running", "getUser", "HTTPServer", "v1.2", "C++",
	"é", "e\u0301", "\u0301", "\u3099", "ß", "İ", "ﬁ", "Ｍ", "ｶ", "ø", "Æ", "’", "–", "—", "\u00a0", "\u3000",
	"创", "建", "用户", "か\u3099", "ー", "한", "국", "ㅋ", "\u1100", "Ж", "ά", "ि", "🚀", "\xff", "\xe2\x82",
}

// randomText joins n random pieces.
func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(pieces[r.Intn(len(pieces))])
	}
	return b.String()
}

// TestFastPathsMatchReference checks the ASCII fast path, per-field normalisation
// and the term cache against the plain path: whole-text normalisation, no cache.
func TestFastPathsMatchReference(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, opts := range []Options{DefaultOptions(), {}, {Stem: true}, {Stopwords: true}} {
		fast := New(opts)
		tiny := New(Options{Stem: opts.Stem, Stopwords: opts.Stopwords, CacheSize: 1})
		ref := New(Options{Stem: opts.Stem, Stopwords: opts.Stopwords, CacheSize: -1})
		for i := 0; i < 3000; i++ {
			text := randomText(r, r.Intn(30))
			want := ref.appendTokens(nil, text, true)
			for name, got := range map[string][]string{
				"fast":       fast.AppendTokens(nil, text),
				"tiny cache": tiny.AppendTokens(nil, text),
				"no cache":   ref.AppendTokens(nil, text),
			} {
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%+v %s: Tokens(%q) = %q, reference %q", opts, name, text, got, want)
				}
			}
		}
	}
}

// TestConcurrentUse runs tokenizers sharing one small, constantly evicting cache
// from many goroutines and compares with sequential results; run it with -race.
func TestConcurrentUse(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	texts := make([]string, 300)
	for i := range texts {
		texts[i] = randomText(r, 20) + fmt.Sprintf(" word%d running_tasks", i)
	}
	ref := New(Options{Stem: true, Stopwords: true, CacheSize: -1})
	want := make([][]string, len(texts))
	for i, text := range texts {
		want[i] = ref.Tokens(text)
	}
	tk := New(Options{Stem: true, Stopwords: true, CacheSize: 64})
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for k := 0; k < 3; k++ {
				for i := range texts {
					j := (i + g*37) % len(texts)
					if got := tk.Tokens(texts[j]); !reflect.DeepEqual(got, want[j]) {
						errs <- fmt.Sprintf("Tokens(%q) = %q, want %q", texts[j], got, want[j])
						return
					}
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestCacheBounded checks that the cache never holds more than its capacity.
func TestCacheBounded(t *testing.T) {
	for _, size := range []int{1, 64, 1000} {
		t.Run(fmt.Sprintf("size=%d", size), func(t *testing.T) {
			tk := New(Options{Stem: true, CacheSize: size})
			limit := max(1, size/cacheShards) * cacheShards
			for i := 0; i < 5000; i++ {
				tk.Tokens(fmt.Sprintf("word%c%c%c", 'a'+i%26, 'a'+i/26%26, 'a'+i/676%26))
				if n := tk.cache.len(); n > limit {
					t.Fatalf("after %d words the cache holds %d entries, limit %d", i+1, n, limit)
				}
			}
		})
	}
	if New(Options{CacheSize: -1}).cache != nil {
		t.Fatal("negative CacheSize did not disable the cache")
	}
}

// TestNextPartCoversLetters checks the identifier splitter against its contract on
// random ASCII chunks: parts are disjoint, in order, and together hold every letter
// and digit of the chunk.
func TestNextPartCoversLetters(t *testing.T) {
	const alphabet = "aAbBzZ09_-./'"
	r := rand.New(rand.NewSource(4))
	for i := 0; i < 5000; i++ {
		b := make([]byte, r.Intn(16))
		for j := range b {
			b[j] = alphabet[r.Intn(len(alphabet))]
		}
		s := string(b)
		var got, want strings.Builder
		last := 0
		for ps, pe := nextPart(s, 0); ps < len(s); ps, pe = nextPart(s, pe) {
			if ps < last || pe <= ps {
				t.Fatalf("nextPart(%q) gave [%d,%d) after %d", s, ps, pe, last)
			}
			last = pe
			got.WriteString(strings.ReplaceAll(s[ps:pe], "'", ""))
		}
		for _, c := range s {
			if classOf(c).base() {
				want.WriteRune(c)
			}
		}
		if got.String() != want.String() {
			t.Fatalf("parts of %q hold %q, want %q", s, got.String(), want.String())
		}
	}
}
