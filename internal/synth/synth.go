// Package synth generates synthetic memory corpora for benchmarks: texts of
// varied length drawn from a Zipf-like vocabulary grouped into topics, with
// occasional code identifiers, queries aimed at known memories, and a cheap
// deterministic embedder whose vectors cluster by topic.
//
// Everything is a pure function of the seed and the item number, so memory i
// is the same whichever order, or process, generates it.
package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/engram-memory/engram/memory"
)

// Defaults for Config.
const (
	DefaultSeed   = 1
	DefaultDim    = 512
	DefaultVocab  = 30000
	DefaultTopics = 64
	// TopicWords is the size of each topic's own word list.
	TopicWords = 400
	// MinVocab is the smallest vocabulary New makes.
	MinVocab = 100
	// zipfS is the Zipf exponent of word frequencies (natural text is near 1).
	zipfS = 1.07
)

// Config chooses a corpus. Zero fields take the defaults.
type Config struct {
	Seed   uint64
	Dim    int // vector dimension
	Vocab  int // distinct generated words (at least MinVocab)
	Topics int // vector clusters; each memory is about one topic
}

// Corpus generates memories, queries and vectors for one Config. It is
// immutable after New and safe for concurrent use.
type Corpus struct {
	cfg       Config
	words     []string         // by frequency rank
	wordIndex map[string]int32 // word → rank
	cum       []float64        // cumulative Zipf weights over ranks
	topics    [][]int32        // topic → its word ranks, most frequent first
	topicCum  []float64        // cumulative Zipf weights over a topic's list
	home      []int32          // rank → topic it belongs to, or -1
	wordVec   []float32        // rank → vector, rows of Dim
	base      time.Time
}

// New builds the vocabulary, the topic lists and the word vectors: about
// Vocab·Dim·4 bytes (60 MB at the defaults) and well under a second.
func New(cfg Config) *Corpus {
	if cfg.Seed == 0 {
		cfg.Seed = DefaultSeed
	}
	if cfg.Dim <= 0 {
		cfg.Dim = DefaultDim
	}
	if cfg.Vocab <= 0 {
		cfg.Vocab = DefaultVocab
	}
	cfg.Vocab = max(cfg.Vocab, MinVocab)
	if cfg.Topics <= 0 {
		cfg.Topics = DefaultTopics
	}
	c := &Corpus{cfg: cfg, base: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	c.words, c.wordIndex = makeVocab(r, cfg.Vocab)
	c.cum = zipfCum(len(c.words))
	c.topicCum = zipfCum(min(TopicWords, len(c.words)))
	c.home = make([]int32, len(c.words))
	for i := range c.home {
		c.home[i] = -1
	}
	// Topic words come from below the most common ranks, the way content words do.
	pool := make([]int32, 0, len(c.words))
	for i := min(200, len(c.words)/10); i < len(c.words); i++ {
		pool = append(pool, int32(i))
	}
	r.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	all := append([]int32(nil), pool...)
	c.topics = make([][]int32, cfg.Topics)
	for t := range c.topics {
		if len(pool) < TopicWords { // a small vocabulary: topics share words
			pool = append(pool, all...)
		}
		n := min(TopicWords, len(pool))
		list := append([]int32(nil), pool[:n]...)
		pool = pool[n:]
		sort.Slice(list, func(i, j int) bool { return list[i] < list[j] })
		for _, w := range list {
			c.home[w] = int32(t)
		}
		c.topics[t] = list
	}
	centroids := make([]float32, cfg.Topics*cfg.Dim)
	for t := range cfg.Topics {
		gaussianUnit(r, centroids[t*cfg.Dim:(t+1)*cfg.Dim])
	}
	c.wordVec = make([]float32, len(c.words)*cfg.Dim)
	for w := range c.words {
		row := c.wordVec[w*cfg.Dim : (w+1)*cfg.Dim]
		gaussianUnit(r, row)
		if t := c.home[w]; t >= 0 {
			cen := centroids[int(t)*cfg.Dim : (int(t)+1)*cfg.Dim]
			for i := range row {
				row[i] = 0.8*cen[i] + 0.6*row[i]
			}
		}
	}
	return c
}

// ID is the id of memory i.
func ID(i int) string { return fmt.Sprintf("m%08d", i) }

var memTypes = []string{"note", "note", "note", "fact", "fact", "preference", "event", "person", "instruction"}

// Memory returns memory i: a topic, one to a few dozen sentences of its words
// mixed with common words, sometimes a name, a code identifier or tags.
func (c *Corpus) Memory(i int) *memory.Memory {
	r := c.rng(uint64(i), 1)
	topic := r.IntN(c.cfg.Topics)
	// Lengths are log-normal: median about 22 words, a long tail to 300.
	n := int(math.Exp(3.1 + 0.75*r.NormFloat64()))
	n = min(max(n, 3), 300)
	var b strings.Builder
	start := true
	for k := 0; k < n; k++ {
		w := c.word(r, topic)
		if r.IntN(14) == 0 {
			w = c.identifier(r, topic)
		}
		if start {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		b.WriteString(w)
		start = false
		switch {
		case k == n-1:
			b.WriteByte('.')
		case r.IntN(11) == 0:
			b.WriteString(". ")
			start = true
		case r.IntN(9) == 0:
			b.WriteString(", ")
		default:
			b.WriteByte(' ')
		}
	}
	m := &memory.Memory{
		ID:        ID(i),
		Text:      b.String(),
		Type:      memTypes[r.IntN(len(memTypes))],
		Scope:     map[string]string{"user": fmt.Sprintf("u%02d", r.IntN(50))},
		CreatedAt: c.base.Add(time.Duration(i) * time.Minute),
	}
	if r.IntN(10) < 4 {
		parts := make([]string, 2+r.IntN(4))
		for k := range parts {
			parts[k] = c.topicWord(r, topic)
		}
		m.Name = strings.Join(parts, " ")
	}
	if r.IntN(5) == 0 {
		m.Tags = []string{"t-" + c.words[c.topics[topic][0]]}
	}
	return m
}

// Query returns query i over a corpus of n memories and the id of the memory
// it was written from: two to five of that memory's words, preferring its
// rarer ones, and sometimes one of its identifiers whole.
func (c *Corpus) Query(i, n int) (text, target string) {
	r := c.rng(uint64(i), 2)
	j := r.IntN(max(n, 1))
	m := c.Memory(j)
	toks := Words(m.Name + " " + m.Text)
	var content, idents []string
	for _, t := range toks {
		switch rank, ok := c.wordIndex[t]; {
		case !ok && len(t) >= 4:
			idents = append(idents, t)
		case rank >= 200:
			content = append(content, t)
		}
	}
	var q []string
	if len(idents) > 0 && r.IntN(2) == 0 {
		q = append(q, idents[r.IntN(len(idents))])
	}
	want := 2 + r.IntN(4)
	for tries := 0; len(q) < want && tries < 20 && len(content) > 0; tries++ {
		w := content[r.IntN(len(content))]
		if !contains(q, w) {
			q = append(q, w)
		}
	}
	if len(q) == 0 {
		q = toks[:min(3, len(toks))]
	}
	if r.IntN(3) == 0 {
		q = append(q, c.words[c.zipf(r, c.cum)]) // a common word, as people type
	}
	return strings.Join(q, " "), m.ID
}

func contains(s []string, w string) bool {
	for _, x := range s {
		if x == w {
			return true
		}
	}
	return false
}

// rng is the generator for item i of one stream (memories, queries).
func (c *Corpus) rng(i, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(c.cfg.Seed^(stream<<56), i))
}

// word draws a word: from the topic's list two times in five, else from the
// whole vocabulary by frequency.
func (c *Corpus) word(r *rand.Rand, topic int) string {
	if r.IntN(5) < 2 {
		return c.topicWord(r, topic)
	}
	return c.words[c.zipf(r, c.cum)]
}

func (c *Corpus) topicWord(r *rand.Rand, topic int) string {
	list := c.topics[topic]
	return c.words[list[c.zipf(r, c.topicCum[:len(list)])]]
}

// identifier makes a code identifier from topic words: snake_case, an
// environment variable, a file name, an error code or a version.
func (c *Corpus) identifier(r *rand.Rand, topic int) string {
	a, b := c.topicWord(r, topic), c.topicWord(r, topic)
	switch r.IntN(5) {
	case 0:
		return a + "_" + b
	case 1:
		return strings.ToUpper(a + "_" + b + "_dir")
	case 2:
		return a + "-" + b + ".ts"
	case 3:
		return "ERR_" + strings.ToUpper(a) + "_" + strings.ToUpper(b)
	}
	return fmt.Sprintf("v%d.%d.%d", r.IntN(4), r.IntN(20), r.IntN(10))
}

// zipf draws an index from cumulative weights.
func (c *Corpus) zipf(r *rand.Rand, cum []float64) int {
	x := r.Float64() * cum[len(cum)-1]
	return min(sort.SearchFloat64s(cum, x), len(cum)-1)
}

func zipfCum(n int) []float64 {
	cum := make([]float64, n)
	s := 0.0
	for k := range n {
		s += 1 / math.Pow(float64(k+2), zipfS)
		cum[k] = s
	}
	return cum
}

var (
	onsets = strings.Fields("b c d f g h j k l m n p r s t v w z br ch cl dr fl gr pl pr sh st tr th")
	vowels = strings.Fields("a e i o u ai ea io ou")
	codas  = []string{"", "", "", "n", "r", "s", "l", "m", "t", "x", "nd", "rk"}
)

// makeVocab makes n distinct pronounceable words; shorter ones get the more
// frequent ranks, as in natural language.
func makeVocab(r *rand.Rand, n int) ([]string, map[string]int32) {
	words := make([]string, 0, n)
	index := make(map[string]int32, n)
	for len(words) < n {
		syll := 1 + min(len(words)*4/n, 3) // 1 syllable for the top quarter, … up to 4
		syll += r.IntN(2)
		var b strings.Builder
		for range syll {
			b.WriteString(onsets[r.IntN(len(onsets))])
			b.WriteString(vowels[r.IntN(len(vowels))])
		}
		b.WriteString(codas[r.IntN(len(codas))])
		w := b.String()
		if _, dup := index[w]; dup || len(w) < 3 {
			continue
		}
		index[w] = int32(len(words))
		words = append(words, w)
	}
	return words, index
}

// gaussianUnit fills v with a random direction of unit length.
func gaussianUnit(r *rand.Rand, v []float32) {
	var ss float64
	for i := range v {
		x := r.NormFloat64()
		v[i] = float32(x)
		ss += x * x
	}
	inv := float32(1 / math.Sqrt(ss))
	for i := range v {
		v[i] *= inv
	}
}
