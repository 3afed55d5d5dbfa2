package weaviate

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engram-memory/engram/internal/index"
	"github.com/engram-memory/engram/memory"
)

// Property names of the class. Every memory field has one; pTerms exists
// with TokenizerEngram only and holds the BM25 terms; pContext and pDay hold
// what BM25 searches besides a memory's own words (schema 3, episode.go).
const (
	pID          = "mem_id"
	pName        = "name"
	pDescription = "description"
	pText        = "text"
	// pTerms is Engram's terms of name, description, text and speaker, in
	// that order, as one field: Engram's BM25 counts a term over these
	// fields (each of weight 1 and length weight 1) into one document with
	// one length, which Weaviate scores identically when the terms are one
	// property (TestBM25AgainstEngram), not when they are several (it scores
	// each property against its own mean length).
	pTerms    = "terms"
	pType     = "type"
	pScene    = "scene"
	pScope    = "scope" // text[] of "key=value", sorted
	pTags     = "tags"
	pSource   = "source"
	pMetadata = "metadata" // the JSON object, verbatim
	pFavorite = "favorite"
	pCreated  = "created_at"
	pUpdated  = "updated_at"
	pUses     = "uses" // number: GraphQL's Int is 32-bit
	pDemand   = "demand"
	pDemandAt = "demand_at"
	pHash     = "content_hash"
	pModel    = "embed_model"
	pDim      = "embed_dim"

	// Schema 4: pTextKey is memory.TextKey of the text, what a repeat is
	// found by (Backend.PutMerging). Written, never read back into a memory.
	pTextKey = "text_key"

	// Schema 3: episodes, time and supersession.
	pEpisode    = "episode"
	pSeq        = "seq" // number, as uses: seq reaches 2^53
	pSpeaker    = "speaker"
	pOccurred   = "occurred_at"
	pSupersedes = "supersedes"
	// pSupersededBy and pSupersededAt are derived (supersede.go): the id and
	// occurred_at of the memory of the same scope that supersedes this one,
	// and noSuperseder in pSupersededAt when none does.
	pSupersededBy = "superseded_by"
	pSupersededAt = "superseded_at"
	// pContext is derived (episode.go): the text of the memory's neighbours
	// in its episode, as Engram's terms (TokenizerEngram) or raw.
	pContext = "context"
	// pDay is the memory's occurred_at day (index.DateText), as Engram's
	// terms or raw; empty when the date field is off (index.DefaultContext).
	pDay = "occurred_day"
)

// noSuperseder is pSupersededAt of a memory nothing supersedes: the first
// instant after memory.MaxTime, so that every stored time (and so every
// as-of time a filter may ask) lies before it, and still a time Weaviate
// indexes (it keeps dates as Unix nanoseconds, which end in April 2262).
var noSuperseder = memory.MaxTime.Add(time.Nanosecond)

// maxExactInt is the largest integer a float64 (and so a Weaviate number and a
// JSON reader) holds exactly: uses above it are refused rather than rounded.
const maxExactInt = 1 << 53

// idNamespace is the UUIDv5 namespace of Engram ids (a random UUID, fixed
// forever: changing it would orphan every stored object).
var idNamespace = [16]byte{0x6f, 0xef, 0x92, 0xa5, 0x7b, 0x19, 0x47, 0xf6, 0xb9, 0xd0, 0xf7, 0x49, 0x75, 0x2d, 0xa6, 0xdf}

// ObjectID is the Weaviate object UUID of a name: the RFC 9562 version 5
// (SHA-1, name-based) UUID of the name in idNamespace. A memory's object is
// named by its memory.Key (id and scope, see KeyID), so the same id in two
// scopes is two objects, as on every backend. It is the same in every process
// and on every retry, so a repeated write replaces instead of duplicating, and
// a resumed migration skips nothing and copies nothing twice.
func ObjectID(id string) string {
	h := sha1.New()
	h.Write(idNamespace[:])
	h.Write([]byte(id))
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = (u[6] & 0x0f) | 0x50 // version 5
	u[8] = (u[8] & 0x3f) | 0x80 // RFC 4122 variant
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// KeyID is the object UUID of the memory with this id in this scope: the
// ObjectID of its memory.Key (the id and memory.ScopeJSON of the scope).
func KeyID(id string, scope map[string]string) string { return ObjectID(memory.Key(id, scope)) }

// noTenant is the tenant of memories whose scope lacks the tenant key. Plain
// tenant names never contain '_', so it cannot be a scope value's name.
const noTenant = "_none"

// TenantName is the Weaviate tenant holding scope value v of the tenant key.
// Values of lower-case letters, digits and '-' (at most 64) are used as they
// are; any other value is named "x_" and the hex of the first 128 bits of its
// SHA-256, which fits Weaviate's tenant names ([A-Za-z0-9_-]{1,64}) and cannot
// collide with a plain name. An empty v (no such key) is noTenant.
func TenantName(v string) string {
	if v == "" {
		return noTenant
	}
	if len(v) <= 64 && strings.Trim(v, "abcdefghijklmnopqrstuvwxyz0123456789-") == "" {
		return v
	}
	h := sha256.Sum256([]byte(v))
	return "x_" + hex.EncodeToString(h[:16])
}

// VectorName is the named vector holding embeddings of model with dim
// dimensions: the model id with every character outside [A-Za-z0-9] as '_'
// (at most 100), the dimension and 32 bits of the SHA-256 of both, so that
// two models never share a vector index and vectors of one are never compared
// with another's.
func VectorName(model string, dim int) string {
	var b strings.Builder
	b.WriteString("v_")
	for i := 0; i < len(model) && b.Len() < 102; i++ {
		c := model[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
	h := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d", model, dim)))
	fmt.Fprintf(&b, "_d%d_%s", dim, hex.EncodeToString(h[:4]))
	return b.String()
}

// object is a memory as Weaviate's batch API takes it.
type object struct {
	Class      string               `json:"class"`
	Tenant     string               `json:"tenant,omitempty"`
	ID         string               `json:"id"`
	Properties map[string]any       `json:"properties"`
	Vectors    map[string][]float32 `json:"vectors,omitempty"`
}

// termsOf renders text as the BM25 terms Engram's tokenizer gives, joined by
// spaces (terms never contain whitespace).
type termsOf func(text string) string

// encoder says how a memory's searched properties are made: terms is nil
// with TokenizerWord (the raw text is searched), dates whether pDay holds
// the memory's day.
type encoder struct {
	class string
	terms termsOf
	dates bool
}

// occurredAt is when a memory occurred: its OccurredAt, else (a memory
// written without one) its CreatedAt, as every store reads it.
func occurredAt(m *memory.Memory) time.Time {
	if m.OccurredAt.IsZero() {
		return m.CreatedAt
	}
	return m.OccurredAt
}

// day is pDay's value for m, which occurred at t: its day when it has a
// time of its own (index.HasOwnTime), as Engram's date field holds it.
func (e encoder) day(m *memory.Memory, t time.Time) string {
	if !e.dates || !index.HasOwnTime(m) {
		return ""
	}
	if e.terms != nil {
		return e.terms(index.DateText(t))
	}
	return index.DateText(t)
}

// encode turns a normalised memory (id, times and type set) into its object,
// its supersession (pSupersededBy, pSupersededAt) from m.Superseded and
// without a context (pContext): both are derived from other memories, and
// the caller sets them. It refuses what Weaviate could not store exactly:
// invalid UTF-8 (JSON would replace it), non-finite vector values (JSON
// cannot carry them), uses beyond 2^53 (numbers are float64), times outside
// memory.MinTime..MaxTime (dates are Unix nanoseconds).
func (e encoder) encode(tenant string, m *memory.Memory) (*object, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: memory %q: %s", memory.ErrInvalid, m.ID, fmt.Sprintf(format, a...))
	}
	if m.ID == "" {
		return nil, fmt.Errorf("%w: memory without an id", memory.ErrInvalid)
	}
	if m.CreatedAt.IsZero() || m.UpdatedAt.IsZero() {
		return nil, bad("created_at and updated_at must be set")
	}
	occurred := occurredAt(m)
	if err := memory.CheckTime("occurred_at", occurred); err != nil {
		return nil, bad("%v", err)
	}
	for name, s := range map[string]string{"id": m.ID, "name": m.Name, "description": m.Description, "text": m.Text,
		"type": m.Type, "scene": m.Scene, "source": m.Source, "metadata": string(m.Metadata), "content_hash": m.ContentHash,
		"speaker": m.Speaker} {
		if !utf8.ValidString(s) {
			return nil, bad("field %q is not valid UTF-8", name)
		}
	}
	if err := exactValues(m.Scope, m.Type, m.Scene, m.Source, m.Tags); err != nil {
		return nil, bad("%v", err)
	}
	if err := memory.CheckEpisode(m.Episode); err != nil {
		return nil, bad("%v", err)
	}
	if m.Seq < 0 || m.Seq > memory.MaxSeq {
		return nil, bad("seq %d out of range 0..2^53", m.Seq)
	}
	if m.Supersedes != "" {
		if err := memory.CheckID(m.Supersedes); err != nil {
			return nil, bad("supersedes: %v", err)
		}
	}
	if m.Uses < 0 || m.Uses > maxExactInt {
		return nil, bad("uses %d out of range 0..2^53", m.Uses)
	}
	if math.IsNaN(m.Demand) || math.IsInf(m.Demand, 0) {
		return nil, bad("demand %v is not finite", m.Demand)
	}
	if len(m.Metadata) > 0 && !json.Valid(m.Metadata) {
		return nil, bad("metadata is not valid JSON")
	}
	p := map[string]any{
		pID:       m.ID,
		pText:     m.Text,
		pType:     m.Type,
		pFavorite: m.Favorite,
		pCreated:  formatTime(m.CreatedAt),
		pUpdated:  formatTime(m.UpdatedAt),
		pUses:     m.Uses,
		pDemand:   m.Demand,
		pOccurred: formatTime(occurred),
	}
	setText := func(k, v string) {
		if v != "" {
			p[k] = v
		}
	}
	setText(pName, m.Name)
	setText(pDescription, m.Description)
	setText(pScene, m.Scene)
	setText(pSource, m.Source)
	setText(pMetadata, string(m.Metadata))
	setText(pHash, m.ContentHash)
	setText(pTextKey, memory.TextKey(m.Text))
	setText(pEpisode, m.Episode)
	setText(pSpeaker, m.Speaker)
	setText(pSupersedes, m.Supersedes)
	if m.Seq != 0 {
		p[pSeq] = m.Seq
	}
	setSupersession(p, m.Superseded)
	setText(pDay, e.day(m, occurred))
	if e.terms != nil {
		var terms []string
		for _, f := range []string{m.Name, m.Description, m.Text, m.Speaker} {
			if t := e.terms(f); t != "" {
				terms = append(terms, t)
			}
		}
		setText(pTerms, strings.Join(terms, " "))
	}
	if len(m.Scope) > 0 {
		p[pScope] = scopeTerms(m.Scope)
	}
	if len(m.Tags) > 0 {
		p[pTags] = m.Tags
	}
	if m.DemandAt != nil {
		p[pDemandAt] = formatTime(*m.DemandAt)
	}
	o := &object{Class: e.class, Tenant: tenant, ID: KeyID(m.ID, m.Scope), Properties: p}
	if e := m.Embedding; e != nil {
		if e.Model == "" || len(e.Vector) == 0 || e.Dim != len(e.Vector) {
			return nil, bad("embedding needs a model and dim equal to its %d values (dim %d)", len(e.Vector), e.Dim)
		}
		if !utf8.ValidString(e.Model) {
			return nil, bad("embedding model is not valid UTF-8")
		}
		for i, x := range e.Vector {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, bad("embedding value %d is %v", i, x)
			}
		}
		p[pModel] = e.Model
		p[pDim] = e.Dim
		o.Vectors = map[string][]float32{VectorName(e.Model, e.Dim): e.Vector}
	}
	return o, nil
}

// setSupersession sets the supersession properties: the superseding
// memory's id and time, or none (noSuperseder).
func setSupersession(p map[string]any, sup *memory.Supersession) {
	if sup == nil {
		p[pSupersededBy], p[pSupersededAt] = "", formatTime(noSuperseder)
		return
	}
	p[pSupersededBy], p[pSupersededAt] = sup.By, formatTime(sup.At)
}

// exactValues checks the values Weaviate matches exactly ("field"
// tokenization): valid UTF-8 and no surrounding whitespace, which that
// tokenization trims and so would make "u1 " and "u1" the same scope.
func exactValues(scope map[string]string, typ, scene, source string, tags []string) error {
	check := func(what, v string) error {
		if !utf8.ValidString(v) {
			return fmt.Errorf("%s %q is not valid UTF-8", what, v)
		}
		if strings.TrimSpace(v) != v {
			return fmt.Errorf("%s %q has surrounding whitespace, which the Weaviate backend cannot match exactly", what, v)
		}
		return nil
	}
	for k, v := range scope {
		if err := check("scope "+k, v); err != nil {
			return err
		}
		if err := check("scope key", k); err != nil {
			return err
		}
	}
	for what, v := range map[string]string{"type": typ, "scene": scene, "source": source} {
		if err := check(what, v); err != nil {
			return err
		}
	}
	for _, t := range tags {
		if err := check("tag", t); err != nil {
			return err
		}
	}
	return nil
}

// scopeTerms renders a scope as sorted "key=value" strings: lossless, since
// keys cannot hold '='.
func scopeTerms(scope map[string]string) []string {
	out := make([]string, 0, len(scope))
	for k, v := range scope {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// timeLayout keeps every nanosecond; Weaviate's date filters compare at that
// precision (TestTimesToTheNanosecond).
const timeLayout = time.RFC3339Nano

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// fields is a stored object as a GraphQL Get returns it.
type fields struct {
	ID          string   `json:"mem_id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Text        string   `json:"text"`
	Type        string   `json:"type"`
	Scene       string   `json:"scene"`
	Scope       []string `json:"scope"`
	Tags        []string `json:"tags"`
	Source      string   `json:"source"`
	Metadata    string   `json:"metadata"`
	Favorite    bool     `json:"favorite"`
	Created     string   `json:"created_at"`
	Updated     string   `json:"updated_at"`
	Uses        float64  `json:"uses"`
	Demand      float64  `json:"demand"`
	DemandAt    string   `json:"demand_at"`
	Hash        string   `json:"content_hash"`
	TextKey     string   `json:"text_key"`
	Model       string   `json:"embed_model"`
	Dim         float64  `json:"embed_dim"`
	Episode     string   `json:"episode"`
	Seq         float64  `json:"seq"`
	Speaker     string   `json:"speaker"`
	Occurred    string   `json:"occurred_at"`
	Supersedes  string   `json:"supersedes"`
	SuperBy     string   `json:"superseded_by"`
	SuperAt     string   `json:"superseded_at"`
	// Context is the stored context, read by the writes that maintain it
	// (never part of a memory).
	Context string `json:"context"`
	Day     string `json:"occurred_day"`
	// vectors are the named vectors a gRPC answer carried (grpcdecode.go).
	vectors    map[string][]float32
	Additional struct {
		ID           string                     `json:"id"`
		LastUpdate   json.RawMessage            `json:"lastUpdateTimeUnix"`
		Score        json.Number                `json:"score"`
		Distance     *float64                   `json:"distance"`
		ExplainScore string                     `json:"explainScore"`
		Vectors      map[string]json.RawMessage `json:"vectors"`
	} `json:"_additional"`
}

// fullProps are the properties that fill a memory's fields; leanProps
// those that identify and filter a hit (LegQuery.Lean).
var (
	fullProps = []string{pID, pName, pDescription, pText, pType, pScene, pScope, pTags, pSource, pMetadata, pFavorite,
		pCreated, pUpdated, pUses, pDemand, pDemandAt, pHash, pModel, pDim, pEpisode, pSeq, pSpeaker, pOccurred,
		pSupersedes, pSupersededBy, pSupersededAt}
	leanProps = []string{pID, pType, pScene, pScope, pTags, pSource, pCreated, pFavorite, pUses, pDemand, pDemandAt,
		pEpisode, pSeq, pSpeaker, pOccurred, pSupersedes, pSupersededBy, pSupersededAt}
)

// fieldList is the GraphQL selection that fills fields; vectors names the
// vectors to fetch with it.
func fieldList(vectors []string, extra string) string {
	var b strings.Builder
	b.WriteString(strings.Join(fullProps, " ") + " _additional{id " + extra)
	if len(vectors) > 0 {
		b.WriteString(" vectors{" + strings.Join(vectors, " ") + "}")
	}
	b.WriteString("}")
	return b.String()
}

// leanList is the GraphQL selection of what identifies and filters a hit.
func leanList(extra string) string {
	return strings.Join(leanProps, " ") + " _additional{id " + extra + "}"
}

// decodeLean reads what leanList selects: a memory with only its id, scope,
// type, scene, tags, source, created_at, favorite, use counters and episode
// fields (occurred_at and the supersession among them): what memory.Filter
// reads, fusion and the boosts.
func (f *fields) decodeLean() (*memory.Memory, error) {
	full := *f
	full.Updated = f.Created // not selected; decode needs a time
	m, err := full.decode(false)
	if err != nil {
		return nil, err
	}
	m.UpdatedAt = time.Time{}
	return m, nil
}

// decode turns a stored object back into the memory it was made from. With
// withVector the embedding's values are read from f's vectors (they must be
// there); else the embedding names its model and dimension only, with a nil
// vector (the memory still says it has one).
func (f *fields) decode(withVector bool) (*memory.Memory, error) {
	m := &memory.Memory{
		ID: f.ID, Name: f.Name, Description: f.Description, Text: f.Text, Type: f.Type, Scene: f.Scene,
		Source: f.Source, Favorite: f.Favorite, Demand: f.Demand, ContentHash: f.Hash,
		Episode: f.Episode, Speaker: f.Speaker, Supersedes: f.Supersedes,
	}
	if f.ID == "" {
		return nil, fmt.Errorf("object %s has no %s: not written by Engram", f.Additional.ID, pID)
	}
	bad := func(format string, a ...any) (*memory.Memory, error) {
		return nil, fmt.Errorf("stored memory %q: %s", f.ID, fmt.Sprintf(format, a...))
	}
	if len(f.Scope) > 0 {
		m.Scope = make(map[string]string, len(f.Scope))
		for _, kv := range f.Scope {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return bad("scope entry %q has no '='", kv)
			}
			m.Scope[k] = v
		}
	}
	if len(f.Tags) > 0 {
		m.Tags = f.Tags
	}
	if f.Metadata != "" {
		m.Metadata = json.RawMessage(f.Metadata)
	}
	var err error
	if m.CreatedAt, err = parseTime(f.Created); err != nil {
		return bad("created_at: %v", err)
	}
	if m.UpdatedAt, err = parseTime(f.Updated); err != nil {
		return bad("updated_at: %v", err)
	}
	if f.DemandAt != "" {
		t, err := parseTime(f.DemandAt)
		if err != nil {
			return bad("demand_at: %v", err)
		}
		m.DemandAt = &t
	}
	if f.Uses < 0 || f.Uses > maxExactInt || f.Uses != math.Trunc(f.Uses) {
		return bad("uses %v is not a count", f.Uses)
	}
	m.Uses = int64(f.Uses)
	if err := f.decodeEpisode(m); err != nil {
		return bad("%v", err)
	}
	if f.Model != "" {
		dim := int(f.Dim)
		if dim <= 0 || float64(dim) != f.Dim {
			return bad("embed_dim %v", f.Dim)
		}
		m.Embedding = &memory.Embedding{Model: f.Model, Dim: dim}
		if withVector {
			if v, ok := f.vectors[VectorName(f.Model, dim)]; ok { // read over gRPC
				m.Embedding.Vector = v
			} else if raw, ok := f.Additional.Vectors[VectorName(f.Model, dim)]; !ok {
				return bad("its %s vector is missing", f.Model)
			} else if err := json.Unmarshal(raw, &m.Embedding.Vector); err != nil {
				return bad("vector: %v", err)
			}
			if len(m.Embedding.Vector) != dim {
				return bad("vector has %d values but dim %d", len(m.Embedding.Vector), dim)
			}
		}
	}
	return m, nil
}

// decodeEpisode reads the schema-3 fields into m (whose created_at is
// read). An object written before schema 3 was backfilled (migrate.go); one
// without occurred_at still reads as having occurred when it was created,
// and one without superseded_at as superseded by none.
func (f *fields) decodeEpisode(m *memory.Memory) error {
	if f.Seq < 0 || f.Seq > memory.MaxSeq || f.Seq != math.Trunc(f.Seq) {
		return fmt.Errorf("seq %v is not a position", f.Seq)
	}
	m.Seq = int64(f.Seq)
	m.OccurredAt = m.CreatedAt
	if f.Occurred != "" {
		t, err := parseTime(f.Occurred)
		if err != nil {
			return fmt.Errorf("occurred_at: %v", err)
		}
		m.OccurredAt = t
	}
	if f.SuperAt != "" && f.SuperBy != "" {
		t, err := parseTime(f.SuperAt)
		if err != nil {
			return fmt.Errorf("superseded_at: %v", err)
		}
		if !t.Equal(noSuperseder) {
			m.Superseded = &memory.Supersession{By: f.SuperBy, At: t}
		}
	}
	return nil
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}
