package memory

import (
	"maps"
	"time"
)

// Search modes.
const (
	ModeHybrid = "hybrid"
	ModeBM25   = "bm25"
	ModeVector = "vector"
)

// Strategies name what actually ran (DESIGN §1).
const (
	StrategyHybrid = "hybrid"
	StrategyBM25   = "bm25"
	StrategyVector = "vector"
	StrategyNative = "native"
)

// Query asks for one search. Zero values take the store's defaults.
type Query struct {
	QID   string `json:"qid,omitempty"`
	Query string `json:"query"`
	Limit int    `json:"limit,omitempty"`
	Mode  string `json:"mode,omitempty"`
	Filter
	// Candidates is the pool each leg returns before fusion; 0 means max(5×limit, 50).
	Candidates int `json:"candidates,omitempty"`
	// BM25Weight and VectorWeight override the fusion weights for this query.
	BM25Weight   *float64 `json:"bm25_weight,omitempty"`
	VectorWeight *float64 `json:"vector_weight,omitempty"`
	// Fusion names the fusion: "rrf" (default), "rsf", "dbsf".
	Fusion string `json:"fusion,omitempty"`
	// RRFK is reciprocal rank fusion's k for this query (Σ w/(k+rank)); 0
	// means the model's default (60, Cormack et al. 2009, unless measured
	// otherwise).
	RRFK float64 `json:"rrf_k,omitempty"`
	// KeywordGate overrides the embedding model's keyword gate for this
	// hybrid query: the keyword relevance (0–1) BM25's best match must reach
	// for BM25 to keep its whole fusion weight; below it the weight shrinks
	// in proportion. 0 turns the gate off.
	KeywordGate *float64 `json:"keyword_gate,omitempty"`
	// Optional stages.
	Rerank bool     `json:"rerank,omitempty"`
	HyDE   bool     `json:"hyde,omitempty"`
	MMR    bool     `json:"mmr,omitempty"`
	Lambda *float64 `json:"mmr_lambda,omitempty"`
	// MinRelevance drops results whose relevance (in [0,1]) is below it.
	MinRelevance float64 `json:"min_relevance,omitempty"`
	// ModelBar drops results below the embedding model's relevance bar (what
	// inject, the hooks and MCP use by default) when MinRelevance is 0.
	ModelBar bool `json:"model_bar,omitempty"`
	// NoRecord skips recording a use for the delivered results.
	NoRecord bool `json:"no_record,omitempty"`
	// IncludeSuperseded also returns memories another memory supersedes
	// (by default a search returns what is current; see Filter.AsOf).
	IncludeSuperseded bool `json:"include_superseded,omitempty"`
	// Now is the reference time of the query's relative date phrases ("last
	// week"); nil means the current time. NoDates turns the reading of date
	// phrases off: no time window boosts the results.
	Now     *time.Time `json:"now,omitempty"`
	NoDates bool       `json:"no_dates,omitempty"`
	// Neighbours attaches to each result of an episode up to this many of
	// the memories before and after it (Result.Neighbours).
	Neighbours int `json:"neighbours,omitempty"`
}

// MaxNeighbours bounds Query.Neighbours and the delivery options' neighbours.
const MaxNeighbours = 20

// TimeWindow is a date phrase a search read in its query and the span of
// time it names, [Since, Until): memories that occurred inside it were
// boosted by Boost.
type TimeWindow struct {
	Phrase string    `json:"phrase"`
	Since  time.Time `json:"since"`
	Until  time.Time `json:"until"`
	Boost  float64   `json:"boost"`
}

// In reports whether t lies inside one of the windows.
func In(windows []TimeWindow, t time.Time) bool {
	for _, w := range windows {
		if !t.Before(w.Since) && t.Before(w.Until) {
			return true
		}
	}
	return false
}

// Response is a search's answer: what ran, what was skipped and why, how long
// each stage took, and every result with its explanation (DESIGN §6, contract).
type Response struct {
	QID       string             `json:"qid,omitempty"`
	Query     string             `json:"query"`
	Strategy  string             `json:"strategy"`
	Fusion    *FusionInfo        `json:"fusion,omitempty"`
	Stages    []string           `json:"stages"`
	Degraded  []Degraded         `json:"degraded"`
	TimingsMS map[string]float64 `json:"timings_ms"`
	// RelevanceBar is the embedding model's relevance bar for the strategy
	// that ran (and, for a model with bars of its own for other scripts than
	// Latin, the query's script): a result at or above it is relevant, and
	// only those count as a use. MinRelevance is the bar this search applied (0: none), and
	// BelowBar how many candidates it dropped.
	RelevanceBar float64 `json:"relevance_bar"`
	MinRelevance float64 `json:"min_relevance,omitempty"`
	BelowBar     int     `json:"below_bar,omitempty"`
	// Time lists the date phrases read in the query and their windows.
	Time []TimeWindow `json:"time,omitempty"`
	// Reduced says how a long query was cut to bounded work; nil for a
	// query short enough to run whole.
	Reduced *Reduced `json:"reduced,omitempty"`
	Results []Result `json:"results"`
}

// Reduced is what a long query (over recall's LongQueryBytes) was cut to
// before any leg ran: its distinct keyword terms merged, those of its window
// and the most discriminative of the rest kept, and its window (its start
// and end) for the rest.
type Reduced struct {
	// Bytes is the query's length.
	Bytes int `json:"bytes"`
	// Sampled is the bytes its terms were counted in: Bytes, or a sample
	// spread over a longer query (recall's TermSampleBytes).
	Sampled int `json:"sampled"`
	// Terms is the keyword terms counted, repeats included; Distinct
	// without them.
	Terms    int `json:"terms"`
	Distinct int `json:"distinct"`
	// Kept is the terms the BM25 leg searched, in order of first appearance.
	Kept []string `json:"kept"`
	// Window is the bytes of the query's start and end that the vector
	// leg, date reading, HyDE and rerank read.
	Window int `json:"window"`
}

// FusionInfo says how the legs were merged.
type FusionInfo struct {
	Method  string             `json:"method"`
	K       float64            `json:"k,omitempty"`
	Weights map[string]float64 `json:"weights"`
	// WeightSource says where the vector weight came from: model, store or query.
	WeightSource string `json:"weight_source,omitempty"`
	Candidates   int    `json:"candidates"`
	// Gated is set when the keyword gate scaled BM25's weight down.
	Gated *Gated `json:"gated,omitempty"`
}

// Gated says BM25's weight was scaled down for a hybrid query: its best
// match's keyword relevance (Best) was below the model's keyword gate (Gate),
// so the weight in FusionInfo.Weights is the configured one × Best/Gate. A
// keyword match that covers little of the query (a paraphrase in other
// words, a Chinese question sharing one incidental bigram with a memory)
// then does not outrank what the vector leg found.
type Gated struct {
	Gate float64 `json:"gate"`
	Best float64 `json:"best"`
}

// Degraded names a stage that was skipped or fell back, and why.
type Degraded struct {
	Stage  string `json:"stage"`
	Reason string `json:"reason"`
}

// Result is one recalled memory.
type Result struct {
	ID          string            `json:"id"`
	Text        string            `json:"text"`
	Name        string            `json:"name,omitempty"`
	Description string            `json:"description,omitempty"`
	Type        string            `json:"type"`
	Scene       string            `json:"scene,omitempty"`
	Scope       map[string]string `json:"scope,omitempty"`
	Tags        []string          `json:"tags,omitempty"`
	Source      string            `json:"source,omitempty"`
	Favorite    bool              `json:"favorite,omitempty"`
	Episode     string            `json:"episode,omitempty"`
	Seq         int64             `json:"seq,omitempty"`
	Speaker     string            `json:"speaker,omitempty"`
	OccurredAt  time.Time         `json:"occurred_at,omitzero"`
	Supersedes  string            `json:"supersedes,omitempty"`
	// SupersededBy names the memory that supersedes this one (only a search
	// with include_superseded or as_of returns such a memory).
	SupersededBy string    `json:"superseded_by,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	Score        float64   `json:"score"`
	Explain      *Explain  `json:"explain"`
	// Excerpt is the passage a delivery (inject, brief) showed when the whole
	// text did not fit its budget; Text is always whole.
	Excerpt string `json:"excerpt,omitempty"`
	// Neighbours are the memories next to this one in its episode, in
	// episode order, when the query asked for them.
	Neighbours []Neighbour `json:"neighbours,omitempty"`
}

// Neighbour is a memory next to a result in its episode: Offset is its
// place relative to the result (-1 the one before, 1 the one after).
type Neighbour struct {
	ID         string    `json:"id"`
	Offset     int       `json:"offset"`
	Seq        int64     `json:"seq,omitempty"`
	Speaker    string    `json:"speaker,omitempty"`
	Text       string    `json:"text"`
	OccurredAt time.Time `json:"occurred_at,omitzero"`
}

// NeighbourOf is m as a neighbour at offset.
func NeighbourOf(m *Memory, offset int) Neighbour {
	return Neighbour{ID: m.ID, Offset: offset, Seq: m.Seq, Speaker: m.Speaker, Text: m.Text, OccurredAt: m.OccurredAt}
}

// ResultOf is m as a result, without search evidence (Score and Explain).
func ResultOf(m *Memory) Result {
	// The scope is copied: an index shares one map among the memories of a
	// scope, and a caller changing a result's must not change theirs.
	r := Result{ID: m.ID, Text: m.Text, Name: m.Name, Description: m.Description, Type: m.Type, Scene: m.Scene,
		Scope: maps.Clone(m.Scope), Tags: m.Tags, Source: m.Source, Favorite: m.Favorite, CreatedAt: m.CreatedAt,
		Episode: m.Episode, Seq: m.Seq, Speaker: m.Speaker, OccurredAt: m.OccurredAt, Supersedes: m.Supersedes}
	if m.Superseded != nil {
		r.SupersededBy = m.Superseded.By
	}
	return r
}

// Explain says where a result's score came from. A leg that did not return the
// result is null.
type Explain struct {
	BM25   *LegBM25   `json:"bm25"`
	Vector *LegVector `json:"vector"`
	// Fused is the fused score before boosts, whichever fusion produced it
	// (the response's fusion.method says which: rsf, rrf or dbsf).
	Fused float64 `json:"fused"`
	// RRF is Fused under its first name, kept for clients that read "rrf";
	// it is not reciprocal-rank fusion's unless fusion.method is rrf.
	//
	// Deprecated: read Fused.
	RRF       float64  `json:"rrf"`
	Boosts    Boosts   `json:"boosts"`
	Relevance float64  `json:"relevance"`
	Rerank    *Rerank  `json:"rerank,omitempty"`
	MMR       *MMRInfo `json:"mmr,omitempty"`
}

// LegBM25 is a result's place in the keyword leg.
type LegBM25 struct {
	Rank  int     `json:"rank"`
	Score float64 `json:"score"`
}

// LegVector is a result's place in the vector leg.
type LegVector struct {
	Rank   int     `json:"rank"`
	Cosine float64 `json:"cosine"`
	// Read is the share of the query's and the memory's letters the model
	// reads (their product), when below 1: the cosine counts towards
	// relevance in that proportion.
	Read float64 `json:"read,omitempty"`
}

// Boosts are the bounded multipliers applied after fusion.
type Boosts struct {
	Favorite float64 `json:"favorite"`
	Demand   float64 `json:"demand"`
	// Time is the multiplier of a memory that occurred inside a window the
	// query's date phrases name (Response.Time); absent when none applied.
	Time float64 `json:"time,omitempty"`
}

// Rerank is a result's cross-encoder score and where it stood before.
type Rerank struct {
	Score   float64 `json:"score"`
	PreRank int     `json:"pre_rank"`
}

// MMRInfo is a result's diversity step.
type MMRInfo struct {
	PreRank    int     `json:"pre_rank"`
	Redundancy float64 `json:"redundancy"`
	Score      float64 `json:"score"`
}
