// Package bert is a pure-Go BERT sentence encoder: the model's own WordPiece
// tokenizer, the transformer layers, mean (or CLS) pooling and L2
// normalisation, over a model file embedded in the binary (all-MiniLM-L6-v2).
package bert

import (
	"context"
	_ "embed" // the built-in model
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/internal/tensorfile"
)

// minilm is all-MiniLM-L6-v2 as tools/modelconv/bert_convert.py writes it
// (see its README and the repository's NOTICE for origin and licence). As a
// string it stays in the binary's read-only data until first use.
//
//go:embed minilm-l6-v2.etf
var minilm string

// Revision is bumped whenever this package's code changes the vectors it
// computes from the same file; it appears in Model().
const Revision = 1

// DefaultBatchTokens bounds the tokens of one forward pass: enough rows for
// the linear layers to run at full speed, little enough scratch (15 KB a
// token: ~32 MB at 2,048).
const DefaultBatchTokens = 2048

// Options configure an Embedder. The zero value is the default.
type Options struct {
	// BatchTokens bounds the tokens of one forward pass; 0 means DefaultBatchTokens.
	BatchTokens int
	// Workers is how many goroutines one Embed call uses; 0 means GOMAXPROCS.
	Workers int
	// Precision of the linear layers' multiplications; "" means FP32.
	Precision Precision
}

// Precision is the number format the linear layers multiply in.
type Precision string

const (
	// FP32 multiplies in float32 on every CPU: the same vectors everywhere
	// (minimum cosine to the PyTorch reference 0.99986).
	FP32 Precision = "fp32"
	// BF16 multiplies in bfloat16 where the CPU does so natively
	// (AVX512_BF16), about twice as fast there (minimum cosine 0.99984);
	// elsewhere it is FP32.
	BF16 Precision = "bf16"
)

// PrecisionEnv names the environment variable Default reads Precision from.
const PrecisionEnv = "ENGRAM_BERT_PRECISION"

// Embedder implements embed.Embedder over a BERT model file. It is safe for
// concurrent use; the weights are decoded on first use.
type Embedder struct {
	data  string
	meta  *meta
	opts  Options
	model string

	once sync.Once
	w    *weights
	err  error
}

var _ embed.Embedder = (*Embedder)(nil)

// New returns an embedder over the built-in all-MiniLM-L6-v2. It reads only
// the file's header: a program that never embeds pays nothing more.
func New(opts Options) (*Embedder, error) { return NewFromData(minilm, opts) }

var defaultEmbedder = sync.OnceValues(func() (*Embedder, error) {
	return New(Options{Precision: Precision(strings.ToLower(os.Getenv(PrecisionEnv)))})
})

// Default returns the shared embedder over the built-in model with default
// options, but for Precision, which comes from $ENGRAM_BERT_PRECISION.
func Default() (*Embedder, error) { return defaultEmbedder() }

// NewFromData returns an embedder over a model file's bytes (for tests and
// the evaluation tools; the built-in file is what New uses).
func NewFromData(data string, opts Options) (*Embedder, error) {
	if opts.BatchTokens == 0 {
		opts.BatchTokens = DefaultBatchTokens
	}
	if opts.BatchTokens < 0 || opts.Workers < 0 {
		return nil, fmt.Errorf("bert: negative option (BatchTokens %d, Workers %d)", opts.BatchTokens, opts.Workers)
	}
	switch opts.Precision {
	case "":
		opts.Precision = FP32
	case FP32, BF16:
	default:
		return nil, fmt.Errorf("bert: precision %q is neither %q nor %q", opts.Precision, FP32, BF16)
	}
	mb, err := tensorfile.Meta(data)
	if err != nil {
		return nil, fmt.Errorf("bert: model file: %w", err)
	}
	m, err := parseMeta(mb)
	if err != nil {
		return nil, err
	}
	opts.BatchTokens = max(opts.BatchTokens, m.Tokenizer.MaxLength)
	e := &Embedder{data: data, meta: m, opts: opts}
	e.model = m.Name
	if m.Revision > 1 {
		e.model += "." + strconv.Itoa(m.Revision)
	}
	e.model += "-v" + strconv.Itoa(Revision)
	return e, nil
}

// Model names the model, e.g. "all-minilm-l6-v2-v1": the file's name and
// revision and this package's Revision.
func (e *Embedder) Model() string { return e.model }

// Dim is the vector length (384 for all-MiniLM-L6-v2).
func (e *Embedder) Dim() int { return e.meta.Bert.Hidden }

// MaxTokens is the most tokens of a text the model reads, [CLS] and [SEP]
// included; the rest is cut off.
func (e *Embedder) MaxTokens() int { return e.meta.Tokenizer.MaxLength }

func (e *Embedder) load() (*weights, error) {
	e.once.Do(func() {
		f, err := tensorfile.Parse(e.data)
		if err != nil {
			e.err = fmt.Errorf("bert: model file: %w", err)
			return
		}
		e.w, e.err = load(f, e.meta, e.opts.Precision)
	})
	return e.w, e.err
}

// Tokenize returns the ids the model reads for text: [CLS], the WordPiece
// ids, [SEP], cut at MaxTokens.
func (e *Embedder) Tokenize(text string) ([]int32, error) {
	w, err := e.load()
	if err != nil {
		return nil, err
	}
	return w.tok.Encode(nil, text), nil
}

// Embed returns one L2-normalised vector per text. Every text gets one: an
// empty text is embedded as [CLS] [SEP], as sentence-transformers does. The
// context is checked between forward passes.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bert: %w", err)
	}
	w, err := e.load()
	if err != nil {
		return nil, err
	}
	workers := e.opts.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	h := e.meta.Bert.Hidden
	out := make([][]float32, len(texts))
	block := make([]float32, len(texts)*h)
	for i := range out {
		out[i] = block[i*h : (i+1)*h : (i+1)*h]
	}
	ids := make([][]int32, len(texts))
	parallel(workers, len(texts), 64, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			ids[i] = w.tok.Encode(nil, texts[i])
		}
	})
	for lo := 0; lo < len(texts); {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("bert: %w", err)
		}
		hi, tokens := lo, 0
		for hi < len(texts) && (hi == lo || tokens+len(ids[hi]) <= e.opts.BatchTokens) {
			tokens += len(ids[hi])
			hi++
		}
		w.forward(ids[lo:hi], out[lo:hi], workers)
		lo = hi
	}
	return out, nil
}
