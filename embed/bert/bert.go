// Package bert is a pure-Go BERT sentence encoder: the model's own WordPiece
// tokenizer, the transformer layers, mean (or CLS) pooling and L2
// normalisation, over a model file embedded in the binary: bge-small-en-v1.5
// (NewBGESmall, the default built-in model) or all-MiniLM-L6-v2 (New).
package bert

import (
	"context"
	_ "embed" // the built-in model
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/internal/linalg"
	"github.com/engram-memory/engram/internal/parallel"
	"github.com/engram-memory/engram/internal/tensorfile"
)

// minilm is all-MiniLM-L6-v2 as tools/modelconv/bert_convert.py writes it
// (see its README and the repository's NOTICE for origin and licence). As a
// string it stays in the binary's read-only data until first use. A program
// that never calls New (or Default) does not link it.
//
//go:embed minilm-l6-v2.etf
var minilm string

// bgeSmall is bge-small-en-v1.5 as tools/modelconv/bge_convert.py writes it
// from LangChain4j's ONNX export (see its README and NOTICE): 12 layers,
// CLS pooling, the same uncased WordPiece vocabulary as MiniLM, 512 tokens.
// A program that never calls NewBGESmall does not link it.
//
//go:embed bge-small-en-v1.5.etf
var bgeSmall string

// uncasedTable is the WordPiece lookup table of the two files' vocabulary
// (wordpiece.Table), made ahead so that a process does not hash 30,522
// tokens before its first query; TestVocabTable checks it against each
// built-in file and rewrites it with -update.
//
//go:embed uncased.wpt
var uncasedTable string

// Revision is bumped whenever this package's code changes the vectors it
// computes from the same file; it appears in Model().
const Revision = 2

// DefaultBatchTokens bounds the tokens of one forward pass: enough rows for
// the linear layers to run at full speed, little enough scratch (15 KB a
// token: ~32 MB at 2,048).
const DefaultBatchTokens = 2048

// DefaultWindows bounds how many model-length windows of a long text are
// embedded (8 × 254 word pieces: about 1,500 words); the rest is cut off.
const DefaultWindows = 8

// Options configure an Embedder. The zero value is the default.
type Options struct {
	// Windows bounds the model-length windows a long text is split into,
	// each embedded alone and pooled by token count; 0 means DefaultWindows,
	// 1 cuts every text at MaxTokens as sentence-transformers does.
	Windows int
	// BatchTokens bounds the tokens of one forward pass; 0 means DefaultBatchTokens.
	BatchTokens int
	// Workers is how many goroutines one Embed call uses; 0 means GOMAXPROCS.
	Workers int
	// Precision of the linear layers' multiplications; "" means FP32.
	Precision Precision
	// QueryInstruction makes EmbedQueries prefix each query with the
	// instruction the model file names (bge-small-en-v1.5: "Represent this
	// sentence for searching relevant passages: "); off by default, and an
	// error for a file that names none. The recall pipeline does not use it:
	// measured with engram eval --query-prefix on LoCoMo turns it lowers
	// any@5 a little (vector .5597 → .5496, hybrid RSF w 1 .7673 → .7653).
	// Memories are never prefixed: the model id is the same.
	QueryInstruction bool
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
	// Int8 quantises the activations to int8 per block of 32 values and
	// multiplies them by a file's Q8_0 weights in integers
	// (linalg.PackedQ.Int8Activations) where the CPU has AVX-512 VNNI:
	// bge-small about twice as fast (minimum cosine 0.99930).
	// Elsewhere it is FP32, and so it is for float16 files (MiniLM): its
	// weights in Q8_0 with int8 activations reach only 0.9976.
	Int8 Precision = "int8"
)

// PrecisionEnv names the environment variable Default reads Precision
// from (embed.PrecisionEnv, shared with the other built-in transformers).
const PrecisionEnv = embed.PrecisionEnv

// Embedder implements embed.Embedder over a BERT model file. It is safe for
// concurrent use; the weights are decoded on first use.
type Embedder struct {
	data string
	meta *meta
	// builtIn: data is a file in this binary, whose checksum
	// TestBuiltInChecksum checks, so a process skips reading all of it.
	builtIn bool
	opts    Options
	model   string

	once sync.Once
	w    atomic.Pointer[weights] // set by load; then replaced once by its packed twin (packAfter)
	err  error
	// calls counts Embed calls, for packAfter; packing is set once the
	// packed weights are being made.
	calls   atomic.Int64
	packing atomic.Bool
}

// packAfter is the Embed call after which an embedder whose bf16 weights
// are float16 panels used in place (linalg.PackedF16BF16, which rounds a
// block of them to bf16 for every product) packs them once, in the
// background, and uses the packed twin from then on: the same products bit
// for bit, a 12-token query 0.4 ms sooner, for 12–16 ms of one core and
// 20 MiB (BenchmarkPackBF16, the first packing of a process). A one-shot
// CLI call never gets there; a server, an import or an evaluation does. A
// variable for tests.
var packAfter int64 = 32

var _ embed.Embedder = (*Embedder)(nil)

// New returns an embedder over the built-in all-MiniLM-L6-v2. It reads only
// the file's header: a program that never embeds pays nothing more.
func New(opts Options) (*Embedder, error) { return newBuiltIn(minilm, opts) }

// newBuiltIn returns an embedder over a model file in this binary.
func newBuiltIn(data string, opts Options) (*Embedder, error) {
	e, err := NewFromData(data, opts)
	if err != nil {
		return nil, err
	}
	e.builtIn = true
	return e, nil
}

// shared is an embedder made on its first use with default options, but
// for Precision, which comes from $ENGRAM_BERT_PRECISION. Not a
// package-level sync.OnceValues: that would reach its model file from the
// package's initialisation, and the linker would keep the file in every
// binary that imports this package; a program links only the files whose
// Default it calls.
type shared struct {
	once sync.Once
	e    *Embedder
	err  error
}

func (s *shared) get(open func(Options) (*Embedder, error)) (*Embedder, error) {
	s.once.Do(func() { s.e, s.err = open(Options{Precision: Precision(embed.PrecisionFromEnv())}) })
	return s.e, s.err
}

var defaultMiniLM, defaultBGESmall shared

// Default returns the shared embedder over the built-in all-MiniLM-L6-v2
// with default options, but for Precision, which comes from
// $ENGRAM_BERT_PRECISION.
func Default() (*Embedder, error) { return defaultMiniLM.get(New) }

// NewBGESmall returns an embedder over the built-in bge-small-en-v1.5 (CLS
// pooling, 384-d, 512 tokens; its model id is "bge-small-en-v1.5-v" and
// Revision). Like New, it reads only the file's header.
func NewBGESmall(opts Options) (*Embedder, error) { return newBuiltIn(bgeSmall, opts) }

// DefaultBGESmall is Default for bge-small-en-v1.5.
func DefaultBGESmall() (*Embedder, error) { return defaultBGESmall.get(NewBGESmall) }

// NewFromData returns an embedder over a model file's bytes (for tests and
// the evaluation tools; the built-in file is what New uses).
func NewFromData(data string, opts Options) (*Embedder, error) {
	if opts.BatchTokens == 0 {
		opts.BatchTokens = DefaultBatchTokens
	}
	if opts.BatchTokens < 0 || opts.Workers < 0 || opts.Windows < 0 {
		return nil, fmt.Errorf("bert: negative option (BatchTokens %d, Workers %d, Windows %d)", opts.BatchTokens, opts.Workers, opts.Windows)
	}
	if opts.Windows == 0 {
		opts.Windows = DefaultWindows
	}
	switch opts.Precision {
	case "":
		opts.Precision = FP32
	case FP32, BF16, Int8:
	default:
		return nil, fmt.Errorf("bert: precision %q is not %q, %q or %q", opts.Precision, FP32, BF16, Int8)
	}
	mb, err := tensorfile.Meta(data)
	if err != nil {
		return nil, fmt.Errorf("bert: model file: %w", err)
	}
	m, err := parseMeta(mb)
	if err != nil {
		return nil, err
	}
	if opts.QueryInstruction && m.QueryInstruction == "" {
		return nil, fmt.Errorf("bert: model %s names no query instruction", m.Name)
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

// Model names the model, e.g. "all-minilm-l6-v2-v2": the file's name and
// revision and this package's Revision.
func (e *Embedder) Model() string { return e.model }

// Precision says what the linear layers multiply in: the option asked
// for, or "fp32" followed by why that is used instead ("fp32 (int8 asked:
// this CPU has no AVX-512 VNNI)").
func (e *Embedder) Precision() string {
	switch e.opts.Precision {
	case BF16:
		if !linalg.HasBF16() {
			return "fp32 (bf16 asked: this CPU has no AVX512_BF16)"
		}
	case Int8:
		switch {
		case e.meta.LinearLayout != q8PanelsLayout:
			return "fp32 (int8 asked: this model's float16 weights have no int8 path)"
		case !linalg.HasInt8Activations():
			return "fp32 (int8 asked: this CPU has no AVX-512 VNNI)"
		}
	}
	return string(e.opts.Precision)
}

// InProcess is true: the model runs in this process (embed.InProcess).
func (e *Embedder) InProcess() bool { return true }

// Scripts implements embed.Reader: the model was trained on English text, so
// it reads the Latin script only.
func (e *Embedder) Scripts() embed.Scripts { return embed.Latin }

// Dim is the vector length (384 for both built-in models).
func (e *Embedder) Dim() int { return e.meta.Bert.Hidden }

// MaxTokens is the most tokens of a text the model reads, [CLS] and [SEP]
// included; the rest is cut off.
func (e *Embedder) MaxTokens() int { return e.meta.Tokenizer.MaxLength }

func (e *Embedder) load() (*weights, error) {
	e.once.Do(func() {
		parse := tensorfile.Parse
		if e.builtIn {
			parse = tensorfile.ParseBuiltIn
		}
		f, err := parse(e.data)
		if err != nil {
			e.err = fmt.Errorf("bert: model file: %w", err)
			return
		}
		table := ""
		if e.builtIn {
			table = uncasedTable
		}
		var w *weights
		w, e.err = load(f, e.meta, e.opts.Precision, table)
		e.w.Store(w)
	})
	return e.w.Load(), e.err
}

// maybePack starts packing w's bf16 layers in the background once the
// embedder has been called packAfter times (see packAfter); the packed
// weights replace w for the calls that start after.
func (e *Embedder) maybePack(w *weights) {
	if e.calls.Add(1) != packAfter || !w.packable() || !e.packing.CompareAndSwap(false, true) {
		return
	}
	go func() { e.w.Store(w.packed()) }()
}

// Warm makes the model ready now instead of at the first Embed or Tokenize:
// the tokenizer built, the weights set up and, where they are used in place,
// their pages read in (embed.Warmer).
func (e *Embedder) Warm(ctx context.Context) error {
	w, err := e.load()
	if err != nil {
		return err
	}
	w.prefault(ctx)
	return nil
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
// empty text is embedded as [CLS] [SEP], as sentence-transformers does. A
// text longer than MaxTokens is split into consecutive windows of at most
// MaxTokens (each with its own [CLS] and [SEP], up to Options.Windows of
// them): each is embedded alone, and the text's vector is their mean weighted
// by length, normalised, so that what follows the first window counts too.
// The context is checked between forward passes.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bert: %w", err)
	}
	w, err := e.load()
	if err != nil {
		return nil, err
	}
	e.maybePack(w)
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
	maxLen := e.MaxTokens()
	limit := e.opts.Windows*(maxLen-2) + 2
	ids := make([][]int32, len(texts))
	// Tokenizing is cheap: a goroutine only for every 64 texts.
	parallel.Split(min(workers, len(texts)/64), len(texts), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			ids[i] = w.tok.EncodeUpTo(nil, texts[i], limit)
		}
	})
	// seqs are the forward passes' sequences: a text's ids, or one window of
	// them; owner[j] is the text seqs[j] belongs to.
	seqs, owner := make([][]int32, 0, len(ids)), make([]int, 0, len(ids))
	windowed := false
	for i, s := range ids {
		if len(s) <= maxLen {
			seqs, owner = append(seqs, s), append(owner, i)
			continue
		}
		windowed = true
		first, last := s[0], s[len(s)-1] // [CLS] and [SEP]
		for body := s[1 : len(s)-1]; len(body) > 0; {
			n := min(len(body), maxLen-2)
			win := make([]int32, 0, n+2)
			win = append(append(append(win, first), body[:n]...), last)
			seqs, owner = append(seqs, win), append(owner, i)
			body = body[n:]
		}
	}
	vecs := out
	if windowed {
		vblock := make([]float32, len(seqs)*h)
		vecs = make([][]float32, len(seqs))
		for j := range vecs {
			vecs[j] = vblock[j*h : (j+1)*h : (j+1)*h]
		}
	}
	for lo := 0; lo < len(seqs); {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("bert: %w", err)
		}
		hi, tokens := lo, 0
		for hi < len(seqs) && (hi == lo || tokens+len(seqs[hi]) <= e.opts.BatchTokens) {
			tokens += len(seqs[hi])
			hi++
		}
		w.forward(seqs[lo:hi], vecs[lo:hi], workers)
		lo = hi
	}
	if windowed {
		poolWindows(out, vecs, seqs, owner)
	}
	return out, nil
}

// EmbedQueries is Embed for search queries: with Options.QueryInstruction
// each query is prefixed with the model's instruction first; without it, it
// is Embed.
func (e *Embedder) EmbedQueries(ctx context.Context, queries []string) ([][]float32, error) {
	if !e.opts.QueryInstruction {
		return e.Embed(ctx, queries)
	}
	prefixed := make([]string, len(queries))
	for i, q := range queries {
		prefixed[i] = e.meta.QueryInstruction + q
	}
	return e.Embed(ctx, prefixed)
}

// poolWindows sets each text's vector to the mean of its sequences' vectors
// weighted by their lengths, normalised; a text of one sequence keeps its
// vector as it is.
func poolWindows(out, vecs [][]float32, seqs [][]int32, owner []int) {
	for j := 0; j < len(seqs); {
		i, k := owner[j], j
		for k < len(seqs) && owner[k] == i {
			k++
		}
		if k-j == 1 {
			copy(out[i], vecs[j])
			j = k
			continue
		}
		sum := make([]float64, len(out[i]))
		for ; j < k; j++ {
			wt := float64(len(seqs[j]))
			for d, x := range vecs[j] {
				sum[d] += wt * float64(x)
			}
		}
		for d := range sum {
			out[i][d] = float32(sum[d])
		}
		normalize(out[i])
	}
}
