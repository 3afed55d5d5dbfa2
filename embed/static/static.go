// Package static is the distilled static embedder: all-MiniLM-L6-v2 distilled
// by the Model2Vec method into one int8 vector per WordPiece token. A text's
// vector is the L2-normalised mean of its tokens' vectors: microseconds a
// text, in pure Go, from a file embedded in the binary.
package static

import (
	"context"
	_ "embed" // the built-in model
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/internal/tensorfile"
	"github.com/engram-memory/engram/internal/wordpiece"
)

// builtin is the static model tools/modelconv/static_convert.py writes (see
// its README and the repository's NOTICE for origin and licence).
//
//go:embed minilm-static256.etf
var builtin string

// Revision is bumped whenever this package's code changes the vectors it
// computes from the same file; it appears in Model().
const Revision = 1

// meta is the JSON header of a static model file.
type meta struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Revision  int    `json:"revision"`
	Dim       int    `json:"dim"`
	Normalize bool   `json:"normalize"`
	Tokenizer struct {
		Type         string   `json:"type"`
		Normalizer   string   `json:"normalizer"`
		Unk          string   `json:"unk"`
		Prefix       string   `json:"prefix"`
		Suffix       string   `json:"suffix"`
		Special      []string `json:"special"`
		MaxWordChars int      `json:"max_chars_per_word"`
		MaxLength    int      `json:"max_length"`
		DropUnknown  bool     `json:"drop_unknown"`
	} `json:"tokenizer"`
}

// Embedder implements embed.Embedder over a static model file. It is safe
// for concurrent use; the file is decoded on first use.
type Embedder struct {
	data  string
	meta  meta
	model string

	once sync.Once
	tab  *table
	err  error
}

var _ embed.Embedder = (*Embedder)(nil)

// table is a decoded model: the tokenizer and the int8 rows, in place.
type table struct {
	tok    *wordpiece.Tokenizer
	dim    int
	scales []float32
	q      string // rows × dim int8 values
}

// New returns an embedder over the built-in model. It reads only the file's
// header: a program that never embeds pays nothing more.
func New() (*Embedder, error) { return NewFromData(builtin) }

var defaultEmbedder = sync.OnceValues(New)

// Default returns the shared embedder over the built-in model.
func Default() (*Embedder, error) { return defaultEmbedder() }

// NewFromData returns an embedder over a static model file's bytes.
func NewFromData(data string) (*Embedder, error) {
	mb, err := tensorfile.Meta(data)
	if err != nil {
		return nil, fmt.Errorf("static: model file: %w", err)
	}
	e := &Embedder{data: data}
	if err := json.Unmarshal(mb, &e.meta); err != nil {
		return nil, fmt.Errorf("static: model header: %w", err)
	}
	m := &e.meta
	switch {
	case m.Kind != "static":
		return nil, fmt.Errorf("static: model file is of kind %q, not static", m.Kind)
	case m.Name == "" || m.Revision < 1 || m.Dim <= 0:
		return nil, fmt.Errorf("static: model header lacks a name, revision or dimension")
	case m.Tokenizer.Type != "wordpiece" || m.Tokenizer.Normalizer != "bert_uncased":
		return nil, fmt.Errorf("static: tokenizer %s/%s is not supported (only wordpiece/bert_uncased)", m.Tokenizer.Type, m.Tokenizer.Normalizer)
	}
	e.model = m.Name
	if m.Revision > 1 {
		e.model += "." + strconv.Itoa(m.Revision)
	}
	e.model += "-v" + strconv.Itoa(Revision)
	return e, nil
}

// Model names the model, e.g. "minilm-static256-v1".
func (e *Embedder) Model() string { return e.model }

// InProcess is true: the model runs in this process (embed.InProcess).
func (e *Embedder) InProcess() bool { return true }

// Scripts implements embed.Reader: the model was trained on English text, so
// it reads the Latin script only.
func (e *Embedder) Scripts() embed.Scripts { return embed.Latin }

// Dim is the vector length.
func (e *Embedder) Dim() int { return e.meta.Dim }

func (e *Embedder) load() (*table, error) {
	e.once.Do(func() { e.tab, e.err = e.decode() })
	return e.tab, e.err
}

func (e *Embedder) decode() (*table, error) {
	f, err := tensorfile.Parse(e.data)
	if err != nil {
		return nil, fmt.Errorf("static: model file: %w", err)
	}
	voc, ok := f.Tensor("vocab")
	if !ok || voc.DType != tensorfile.Bytes {
		return nil, fmt.Errorf("static: model file has no vocabulary")
	}
	vocab := strings.Split(voc.Data, "\n")
	m := &e.meta
	tok, err := wordpiece.New(wordpiece.Config{
		Vocab:        vocab,
		Unknown:      m.Tokenizer.Unk,
		Special:      m.Tokenizer.Special,
		Prefix:       m.Tokenizer.Prefix,
		Suffix:       m.Tokenizer.Suffix,
		MaxLen:       m.Tokenizer.MaxLength,
		MaxWordChars: m.Tokenizer.MaxWordChars,
		DropUnknown:  m.Tokenizer.DropUnknown,
	})
	if err != nil {
		return nil, fmt.Errorf("static: %w", err)
	}
	t, ok := f.Tensor("embeddings")
	if !ok || t.DType != tensorfile.Int8Rows || !slices.Equal(t.Shape, []int{len(vocab), m.Dim}) {
		return nil, fmt.Errorf("static: model file has no %d×%d int8 embeddings", len(vocab), m.Dim)
	}
	scales, q, err := t.Int8Rows()
	if err != nil {
		return nil, fmt.Errorf("static: %w", err)
	}
	return &table{tok: tok, dim: m.Dim, scales: scales, q: q}, nil
}

// Tokenize returns the ids whose vectors make text's: unknown words dropped,
// at most the model's maximum length.
func (e *Embedder) Tokenize(text string) ([]int32, error) {
	tab, err := e.load()
	if err != nil {
		return nil, err
	}
	return tab.tok.Encode(nil, text), nil
}

// Embed returns one L2-normalised vector per text, or nil for a text with no
// known token (model2vec gives such a text the zero vector).
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("static: %w", err)
	}
	tab, err := e.load()
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	dim := tab.dim
	block := make([]float32, len(texts)*dim)
	var ids []int32
	for i, text := range texts {
		if i%256 == 255 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("static: %w", err)
			}
		}
		ids = tab.tok.Encode(ids[:0], text)
		v := block[i*dim : (i+1)*dim : (i+1)*dim]
		if tab.pool(v, ids, e.meta.Normalize) {
			out[i] = v
		}
	}
	return out, nil
}

// pool sets v to the mean of the ids' vectors, normalised; it reports false
// when there are no ids (or they sum to zero).
func (t *table) pool(v []float32, ids []int32, norm bool) bool {
	if len(ids) == 0 {
		return false
	}
	for _, id := range ids {
		addRow(v, t.q[int(id)*t.dim:int(id+1)*t.dim], t.scales[id])
	}
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		return false
	}
	// The mean and the sum point the same way: one scale does both.
	scale := float32(1 / float64(len(ids)))
	if norm {
		scale = float32(1 / math.Sqrt(ss))
	}
	for d := range v {
		v[d] *= scale
	}
	return true
}

// addRow adds q × s to v (len(q) == len(v)), eight at a time.
func addRow(v []float32, q string, s float32) {
	v = v[:len(q)]
	d := 0
	for ; d+8 <= len(q); d += 8 {
		qq, vv := q[d:d+8], v[d:d+8:d+8]
		vv[0] += float32(int8(qq[0])) * s
		vv[1] += float32(int8(qq[1])) * s
		vv[2] += float32(int8(qq[2])) * s
		vv[3] += float32(int8(qq[3])) * s
		vv[4] += float32(int8(qq[4])) * s
		vv[5] += float32(int8(qq[5])) * s
		vv[6] += float32(int8(qq[6])) * s
		vv[7] += float32(int8(qq[7])) * s
	}
	for ; d < len(q); d++ {
		v[d] += float32(int8(q[d])) * s
	}
}
