// Package glove is the built-in offline embedder: GloVe 100-d word vectors,
// int8-quantised and embedded in the binary, pooled into one L2-normalised
// vector per text (SIF or stopword-free mean) in pure Go.
package glove

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/embed/glove/vecfile"
)

// Pooling says how word vectors combine into a text's vector.
type Pooling int

// Poolings. The zero value is the measured default.
const (
	// PoolingDefault resolves to DefaultPooling.
	PoolingDefault Pooling = iota
	// Mean averages the vectors of the text's non-stopwords.
	Mean
	// SIF weights each word by a/(a+p(w)), p from its frequency rank
	// (Arora, Liang & Ma 2017, "A Simple but Tough-to-Beat Baseline for Sentence Embeddings").
	SIF
)

// DefaultPooling is the pooling chosen by measurement (tools/gloveeval, dense
// only, common component removed): Mean ties SIF on SciFact nDCG@10 (.266)
// and leads it on LoCoMo turn R@5 (.392 against .345).
const DefaultPooling = Mean

// DefaultSIFA is SIF's smoothing a, the value Arora et al. recommend.
const DefaultSIFA = 1e-3

// Revision is bumped whenever tokenisation, stopwords or pooling change the
// vectors this code computes from the same file; it appears in Model().
const Revision = 1

// String names the pooling as it appears in model ids.
func (p Pooling) String() string {
	switch p {
	case Mean:
		return "mean"
	case SIF:
		return "sif"
	case PoolingDefault:
		return DefaultPooling.String()
	}
	return "pooling(" + strconv.Itoa(int(p)) + ")"
}

// Options configure an Embedder. The zero value is the measured default.
type Options struct {
	Pooling Pooling
	// SIFA is SIF's a; 0 means DefaultSIFA. Ignored by Mean.
	SIFA float64
	// KeepCommon skips removing the common component (for measurement).
	KeepCommon bool
}

func (o Options) resolved() (Options, error) {
	if o.Pooling == PoolingDefault {
		o.Pooling = DefaultPooling
	}
	if o.Pooling != Mean && o.Pooling != SIF {
		return o, fmt.Errorf("glove: unknown pooling %d", int(o.Pooling))
	}
	if o.SIFA == 0 || o.Pooling == Mean {
		o.SIFA = DefaultSIFA
	}
	if !(o.SIFA > 0 && o.SIFA < 1) {
		return o, fmt.Errorf("glove: SIF a = %v, want 0 < a < 1", o.SIFA)
	}
	return o, nil
}

// Embedder implements embed.Embedder over a word-vector file. It is safe for
// concurrent use; the file is decoded and the weights built on first use.
type Embedder struct {
	opts  Options
	src   *source
	hdr   vecfile.Header
	model string

	once sync.Once
	tab  *table
	err  error
}

var _ embed.Embedder = (*Embedder)(nil)

// New returns an embedder over the built-in vectors. It reads only the file's
// header: a program that never embeds pays nothing more.
func New(opts Options) (*Embedder, error) {
	return newEmbedder(builtin, opts)
}

var defaultEmbedder = sync.OnceValues(func() (*Embedder, error) { return New(Options{}) })

// Default returns the shared embedder with the measured default options.
func Default() (*Embedder, error) { return defaultEmbedder() }

// NewFromFile returns an embedder over an already parsed file instead of the
// built-in one (for the converter, the evaluation tool and tests).
func NewFromFile(f *vecfile.File, opts Options) (*Embedder, error) {
	if f == nil {
		return nil, fmt.Errorf("glove: nil file")
	}
	hdr := vecfile.Header{Name: f.Name, Rev: f.Rev, Dim: f.Dim, Words: len(f.Words), SourceWords: f.SourceWords}
	return newEmbedder(&source{file: f, hdr: hdr, parsed: true}, opts)
}

func newEmbedder(src *source, opts Options) (*Embedder, error) {
	opts, err := opts.resolved()
	if err != nil {
		return nil, err
	}
	hdr, err := src.header()
	if err != nil {
		return nil, err
	}
	e := &Embedder{opts: opts, src: src, hdr: hdr}
	e.model = modelID(hdr, opts)
	return e, nil
}

// modelID is "<name>-<pooling>-v<Revision>", qualified by the file's revision
// when above 1 and by any non-default option, so that it changes whenever the
// vectors would.
func modelID(h vecfile.Header, o Options) string {
	name := h.Name
	if h.Rev > 1 {
		name += "." + strconv.Itoa(int(h.Rev))
	}
	id := name + "-" + o.Pooling.String()
	if o.Pooling == SIF && o.SIFA != DefaultSIFA {
		id += "-a" + strconv.FormatFloat(o.SIFA, 'g', -1, 64)
	}
	if o.KeepCommon {
		id += "-keepcc"
	}
	return id + "-v" + strconv.Itoa(Revision)
}

// Model names the model and pooling, e.g. "glove100-mean-v1".
func (e *Embedder) Model() string { return e.model }

// InProcess is true: the model runs in this process (embed.InProcess).
func (e *Embedder) InProcess() bool { return true }

// Scripts implements embed.Reader: the model was trained on English text, so
// it reads the Latin script only.
func (e *Embedder) Scripts() embed.Scripts { return embed.Latin }

// Dim is the vector length (100 for the built-in file).
func (e *Embedder) Dim() int { return e.hdr.Dim }

// Words is the vocabulary size.
func (e *Embedder) Words() int { return e.hdr.Words }

// Embed returns one L2-normalised vector per text, or nil for a text with no
// known (for Mean: no known non-stop) word.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("glove: %w", err)
	}
	tab, err := e.load()
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	dim := tab.dim
	block := make([]float32, len(texts)*dim)
	sc := getScratch(dim)
	defer putScratch(sc)
	for i, t := range texts {
		if i%256 == 255 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("glove: %w", err)
			}
		}
		v := block[i*dim : (i+1)*dim : (i+1)*dim]
		if tab.pool(t, v, sc) {
			out[i] = v
		}
	}
	return out, nil
}

func (e *Embedder) load() (*table, error) {
	e.once.Do(func() {
		f, idx, err := e.src.load()
		if err != nil {
			e.err = err
			return
		}
		e.tab, e.err = newTable(f, idx, e.opts)
	})
	return e.tab, e.err
}
