package engram

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/memory"
)

// Degraded is re-exported for callers that build responses.
type Degraded = memory.Degraded

// ModelDefault is what Engram assumes about an embedding model until a store is
// calibrated: the vector leg's fusion weight (BM25's is 1), the cosine an
// unrelated memory typically reaches (the zero of the relevance signal), and
// the relevance bar a memory must clear to be delivered unasked (inject, the
// hooks, MCP) and to count as a use.
type ModelDefault struct {
	VectorWeight float64
	Floor        float64
	// Fusion is the model's default fusion: rrf unless measured otherwise.
	Fusion string
	// RRFK is the model's k under rrf; 0 means 60.
	RRFK float64
	// Relevance is the bar: measured with engram eval --dataset delivery
	// (ENGRAM_EMBEDDER picks the model) as the smallest bar that leaves each
	// set of absent-topic questions at least 90% empty.
	Relevance float64
	// Paraphrase weighs a hybrid result's vector part on its own in its
	// relevance, so that a close paraphrase sharing no word with the query is
	// not halved by the mean of the two parts (internal/recall/relevance.go);
	// 0 (or up to 0.5): the mean alone. Swept with engram eval --dataset
	// delivery --per-query, each weight at the bar it needs.
	Paraphrase float64
	// VectorRelevance is the bar of a search that ran on the vector leg alone
	// (mode vector), whose relevance is the vector part unhalved: measured
	// the same way, in the same run (its vector-only row); 0 means Relevance.
	VectorRelevance float64
	// KeywordGate is the keyword relevance BM25's best match must reach for
	// BM25 to keep its whole weight in a hybrid; below it the weight shrinks
	// in proportion (memory.Gated), so that keywords that cover little of a
	// query (a paraphrase, a Chinese question sharing one incidental bigram
	// with a memory) do not outrank the vector leg. 0: off, for a model
	// whose vector leg is weaker than such keywords. Swept with engram eval
	// (mode hybrid:kg=G) on SciFact and LoCoMo, and on the Chinese set.
	KeywordGate float64
	// NonLatinRelevance and NonLatinVectorRelevance, when above 0, are
	// Relevance and VectorRelevance for a query less than nine tenths of
	// whose letters are Latin (recall.LatinShare), as the others are
	// measured on English. A model that reads other scripts (multilingual)
	// may score texts in them on another scale: its bars for them are
	// measured on the Chinese set (testdata/relevance/zh), the smallest that
	// leave every absent-topic question of the set with nothing, and stand
	// for every script but Latin.
	NonLatinRelevance, NonLatinVectorRelevance float64
}

// KeywordRelevance is the bar of a search that ran on keywords alone (no
// embedder, or its vector leg degraded), whatever the model: its relevance is
// the keyword part alone, not halved by a missing vector part. Measured as a
// model's bar is, with ENGRAM_EMBEDDER=none: at 0.28 inject leaves 90.9% and
// 100% of the absent-topic sets empty and delivers a gold turn for 24.3% of
// answerable LoCoMo questions (keywords alone separate poorly).
const KeywordRelevance = 0.28

// modelDefaults, by model-id prefix: a new model is one line here. Only the
// built-in models' entries are measured (no other model is reachable
// offline); the others are assumptions to revisit with engram eval
// (--dataset delivery for the bar) and engram calibrate on real data: a
// served embedding model is taken to be strong (equal-weight RRF), and an
// unknown one to be in between.
var modelDefaults = []struct {
	prefix string
	ModelDefault
}{
	// all-MiniLM-L6-v2 (the default until stop 45; docs/evaluation.md, "Embedding models"): fusion
	// measured on SciFact and LoCoMo at RRF k 1, 10 and 60, RSF and DBSF, at
	// weights 0.3–1.5. RRF at k 60 falls below BM25 on LoCoMo turns at every
	// weight; RSF at 0.5 is above BM25 everywhere by the most: SciFact nDCG@10
	// .6925 → .7349, LoCoMo turn any@5 .6028 → .6309 (with session dates .6399
	// → .6590), sessions .9147 → .9298. Floor and bars from engram eval
	// --dataset delivery --relevance-floor 0.2: at the bar .165, the smallest
	// that leaves each absent-topic set 90% empty, inject delivers a gold turn
	// for 63.6% of answerable LoCoMo questions and a relevant abstract for
	// 80.0% of SciFact's, and leaves 90.7% (LoCoMo→SciFact) and 99.3%
	// (SciFact→LoCoMo) of absent-topic questions empty, with the paraphrase
	// weight .85 (each at its bar: 0 62.1%, .7 62.4%, .8 63.4%, .85 63.6%, .9
	// 63.2%, 1 63.0%; the README's "which colour scheme does the user like"
	// finds "Prefers dark themes in every editor" at .197, the mean's .116).
	// On the vector leg alone, .14: 50.0% delivered, 90.2% and 98.3% empty.
	{"all-minilm-l6-v2-", ModelDefault{VectorWeight: 0.5, Floor: 0.2, Fusion: "rsf", Relevance: 0.165, Paraphrase: 0.85, VectorRelevance: 0.14}},
	// bge-small-en-v1.5 (built-in bge-small, issue 28; the default since stop
	// 45: the best hybrid on SciFact and LoCoMo within the default's time
	// limits, and with the Chinese set's 30 absent-topic prompts given
	// nothing since a cosine counts by the share of the texts the model
	// reads; a MiniLM store keeps MiniLM, storemodel.go). The prefix takes both file
	// revisions' ids (bge-small-en-v1.5-v2, float16; bge-small-en-v1.5.2-v2,
	// Q8_0: SciFact hybrid .7515, LoCoMo turn .7693). Fusion measured: RSF at w 1, the one weight at or above 0.75 on SciFact
	// and at or above MiniLM's hybrid on LoCoMo turns. SciFact nDCG@10: vector
	// .7203, RSF w .3 .7302, .5 .7411, 1 .7513, RRF k 60 w 1 .7365 (BM25
	// .6925). LoCoMo turn any@5: vector .5597, RSF w .3 .7633, .5 .7683, .7
	// .7683, 1 .7673 (BM25 .7523; MiniLM's default .7643). Its query
	// instruction is not used: with it, vector .5496, w .5 .7673, w 1 .7653.
	// Floor, bar and paraphrase weight from one ENGRAM_BERT_PRECISION=bf16
	// ENGRAM_EMBEDDER=bge-small engram eval --dataset delivery --per-query run
	// (floor .2, paraphrase 0), its candidates swept offline over floors .2–.55
	// and weights 0–1, each at the smallest bar leaving each absent-topic set
	// 90% empty: floor .4, weight .8, bar .26 delivers a gold turn for 65.9% of
	// answerable LoCoMo questions (floor .2 mean alone, bar .33: 59.6%; floor .5
	// weight 1, bar .19: 65.9%; floor .4 mean alone, bar .235: 63.6%) and a
	// relevant abstract for 83.7% of SciFact's, 91.3% and 91.1% empty. Vector
	// leg alone at floor .4: bar .325, 58.7% delivered, 94.1% and 91.1% empty.
	// Again at stop 45 (fp32, the Q8_0 file, cosines weighed by the share
	// of the texts the model reads; engram eval --dataset delivery): the
	// same bars are the ones suggested, 66.1% and 83.7% delivered, 91.0%
	// and 90.8% empty; vector-only 58.4%, 93.9% and 90.8%.
	{"bge-small-en-v1.5", ModelDefault{VectorWeight: 1, Floor: 0.4, Fusion: "rsf", Relevance: 0.26, Paraphrase: 0.8, VectorRelevance: 0.325}},
	// The static model distilled from MiniLM: RSF at 0.2 is the one weight
	// above BM25 on all three (SciFact .6944, LoCoMo turn .6138, sessions
	// .9147 = BM25); 0.3 is better on LoCoMo (.6199) and below BM25 on
	// SciFact (.6916). At the floor 0.3 and bar 0.265 inject delivers a gold
	// turn for 49.5% of answerable LoCoMo questions (a relevant abstract for
	// 61.7% of SciFact's) and leaves 90.5% (LoCoMo→SciFact) and 100%
	// (SciFact→LoCoMo) of absent-topic questions empty (floors 0.2 and 0.4:
	// 49.3% and 48.0% at their bars). No paraphrase weight: its vector part
	// alone is noisy (at .85 the bar rises to .37 and delivery falls to
	// 37.5%); on the vector leg alone the bar is .435 (32.4% delivered).
	{"minilm-static256-", ModelDefault{VectorWeight: 0.2, Floor: 0.3, Fusion: "rsf", Relevance: 0.265, VectorRelevance: 0.435}},
	// The GloVe leg (the first built-in model) is weak (dense alone: SciFact
	// nDCG@10 .27, LoCoMo turn any@5 .39). Under RRF every weight that helps LoCoMo costs SciFact
	// (.6925 → .641 at 0.1); relative-score fusion keeps BM25's score gaps, so
	// the vector leg only reorders near-ties, and at 0.1 beats BM25 on both:
	// SciFact .6925 → .6968, LoCoMo any@5 .6399 → .6449 (docs/evaluation.md).
	// The floor and the bar come from engram eval --dataset delivery and
	// --relevance-floor: query–memory cosines run lower than the .51–.56 of
	// unrelated memory pairs (tools/relevance), and a floor of .40 separates
	// answerable from absent-topic questions best (tools/relevance AUC .976,
	// against .956 at .55). At the bar .165 inject delivers a gold turn for
	// 47.5% of answerable LoCoMo questions and a relevant abstract for 64.0%
	// of SciFact's, and leaves 90.1% (LoCoMo→SciFact) and 99.1%
	// (SciFact→LoCoMo) of absent-topic questions empty; the floor .55 with the
	// bar .10 shipped before gave 48.0% and 76.3% but left only 62.7% of
	// LoCoMo→SciFact empty. No paraphrase weight (at .85: 46.7% at .175); on
	// the vector leg alone the bar is .16 (36.1% delivered).
	{"glove100-", ModelDefault{VectorWeight: 0.1, Floor: 0.40, Fusion: "rsf", Relevance: 0.165, VectorRelevance: 0.16}},
	// multilingual-e5-small (built-in multilingual). Fusion on LoCoMo turns
	// (engram eval --dataset locomo): any@5 BM25 .7482, vector .5095, RSF at
	// 0.3 and 0.5 .7693 (0.5 the better hit@1 and MRR), RSF at 1 .7472, RRF k
	// 60 .7111. Its cosines sit high for any pair, so its floor and bars are
	// its own. Floor .75: LoCoMo questions reach .726 (median) against SciFact
	// abstracts, .785 against a random turn of their conversation, .842 against
	// their gold turn (p10 .796). Chinese texts score higher still: on the
	// Chinese set (testdata/relevance/zh) gold memories reach .882 and the
	// best memory of an absent-topic query .859 (p90 .879), so the bars of a
	// query less than .9 Latin are their own (stop 46). From one engram eval
	// --dataset delivery --per-query run and the Chinese set's candidates,
	// swept offline over paraphrase weights 0-1 and floors .7-.8:
	// paraphrase .7, floor .75. Latin-script bar .20, the smallest
	// leaving 90% of each English absent-topic set empty: a gold turn for
	// 61.1% of answerable LoCoMo questions, a relevant abstract for 81.0% of
	// SciFact's, 91.8% and 93.1% empty (the bar .26 shipped before, set by
	// the Chinese set: 48.4%; paraphrase 0 at its bar .195: 59.9%).
	// Non-Latin bar .37, the smallest leaving all 30 of the Chinese set's
	// absent-topic questions empty: 42 of 111 answers delivered (.26 shipped
	// before: 50, and 27/30 empty; paraphrase 0 needs .29 for 30/30 and
	// delivers 18). Chosen on random halves of the set, the bar left the
	// other half's 15 absent questions empty in each of 3 splits at
	// paraphrase .7 (.6, .8 and 1 missed one in one split). Vector-only
	// bars: Latin .28 (53.4% delivered, 97.3% and 91.5% empty); non-Latin
	// .53, the cosine .8825 above every absent question's best (.882).
	// Keyword gate .2 (engram eval --modes hybrid:kg=G, G .1–.3): on the
	// Chinese set the hybrid's R@5 rises from .577 to .748 (R@1 .090 to .342;
	// the vector leg alone .784), since a bigram a question shares with an
	// unrelated memory no longer outranks the vector leg; SciFact .7228 to
	// .7215, LoCoMo turn any@5 .7693 to .7683. The English models' gate is
	// off: at .1–.2 it moved SciFact by .0013 at most and LoCoMo turns by
	// .005 at most, either way (MiniLM: sessions and plain turns ±0, inject's
	// delivery 63.6% to 63.4% at .2), nothing to choose by
	// (docs/evaluation.md).
	{"multilingual-e5-small-q4-", ModelDefault{VectorWeight: 0.5, Floor: 0.75, Fusion: "rsf", Relevance: 0.20, Paraphrase: 0.7, VectorRelevance: 0.28, KeywordGate: 0.2,
		NonLatinRelevance: 0.37, NonLatinVectorRelevance: 0.53}},
	{"openai:", ModelDefault{VectorWeight: 1, Floor: 0.2, Fusion: "rrf", Relevance: 0.15}},
	{"ollama:", ModelDefault{VectorWeight: 1, Floor: 0.3, Fusion: "rrf", Relevance: 0.15}},
}

// unknownModel is assumed for a model not listed (an assumption, see above).
var unknownModel = ModelDefault{VectorWeight: 0.5, Floor: 0.3, Fusion: "rrf", Relevance: 0.15}

// ModelDefaults returns the defaults for an embedding model id.
func ModelDefaults(model string) ModelDefault {
	for _, d := range modelDefaults {
		if strings.HasPrefix(model, d.prefix) {
			return d.ModelDefault
		}
	}
	return unknownModel
}

// BuiltinEmbedder is the offline default a new store gets when its options
// name no embedder: the model registered as embed.Builtin, which package
// embed/builtin registers (bge-small-en-v1.5, run in pure Go, compiled into
// the binary) when the program imports it. A store whose vectors come from
// another built-in model linked into the program keeps that model (Open). Without that import it is an
// error that says so: the root does not carry the models' weights itself.
func BuiltinEmbedder() (embed.Embedder, error) {
	e, err := embed.Open(embed.Builtin)
	if errors.Is(err, embed.ErrNotRegistered) {
		return nil, fmt.Errorf("%w: no default embedder in this program: import _ \"github.com/engram-memory/engram/embed/builtin\", or set Options.Embedder, or Options.NoEmbedder for keyword-only search", ErrInvalid)
	}
	return e, err
}

// settingVectorWeight is the settings key of a store's vector weight for a model.
func settingVectorWeight(model string) string { return "vector_weight/" + model }

// vectorWeight resolves the vector leg's weight and says where it came from:
// the option, else the store's setting for this model as the backend holds
// it now (another process may have calibrated), else the model's default.
// Keyword-only, it is 0 and "".
func (e *engine) vectorWeight(ctx context.Context) (float64, string, error) {
	switch {
	case e.embedder == nil:
		return 0, "", nil
	case e.opts.VectorWeight != nil:
		return *e.opts.VectorWeight, "option", nil
	case e.settings != nil:
		key := settingVectorWeight(e.embedder.Model())
		v, ok, err := e.settings.Setting(ctx, key)
		if err != nil {
			return 0, "", err
		}
		if ok {
			w, err := strconv.ParseFloat(v, 64)
			if err != nil || w < 0 {
				return 0, "", fmt.Errorf("setting %s: %q is not a weight", key, v)
			}
			return w, "store", nil
		}
	}
	return ModelDefaults(e.embedder.Model()).VectorWeight, "model", nil
}

// SetVectorWeight stores this store's vector weight for the current model
// (as calibrate does); a negative weight removes it.
func (db *DB) SetVectorWeight(ctx context.Context, w float64) error {
	e := db.e
	if e.embedder == nil {
		return embed.ErrNoEmbedder
	}
	if e.settings == nil {
		return fmt.Errorf("store a vector weight: %w", ErrUnsupported)
	}
	val := ""
	if w >= 0 {
		val = strconv.FormatFloat(w, 'g', -1, 64)
	}
	return e.settings.SetSetting(ctx, settingVectorWeight(e.embedder.Model()), val)
}
