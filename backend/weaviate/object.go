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

	"github.com/engram-memory/engram/memory"
)

// Property names of the class. Every memory field has one; pTerms exists
// with TokenizerEngram only and holds the BM25 terms.
const (
	pID          = "mem_id"
	pName        = "name"
	pDescription = "description"
	pText        = "text"
	// pTerms is Engram's terms of name, description and text, in that order,
	// as one field: Engram's BM25 counts a term over the three fields into
	// one document with one length, which Weaviate scores identically when
	// the terms are one property (TestBM25AgainstEngram), not when they are
	// three (it scores each property against its own mean length).
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
)

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

// encode turns a normalised memory (id, times and type set) into its object.
// It refuses what Weaviate could not store exactly: invalid UTF-8 (JSON would
// replace it), non-finite vector values (JSON cannot carry them), uses beyond
// 2^53 (numbers are float64).
func encode(class, tenant string, m *memory.Memory, terms termsOf) (*object, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: memory %q: %s", memory.ErrInvalid, m.ID, fmt.Sprintf(format, a...))
	}
	if m.ID == "" {
		return nil, fmt.Errorf("%w: memory without an id", memory.ErrInvalid)
	}
	if m.CreatedAt.IsZero() || m.UpdatedAt.IsZero() {
		return nil, bad("created_at and updated_at must be set")
	}
	for name, s := range map[string]string{"id": m.ID, "name": m.Name, "description": m.Description, "text": m.Text,
		"type": m.Type, "scene": m.Scene, "source": m.Source, "metadata": string(m.Metadata), "content_hash": m.ContentHash} {
		if !utf8.ValidString(s) {
			return nil, bad("field %q is not valid UTF-8", name)
		}
	}
	if err := exactValues(m.Scope, m.Type, m.Scene, m.Source, m.Tags); err != nil {
		return nil, bad("%v", err)
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
	if terms != nil {
		setText(pTerms, strings.TrimSpace(terms(m.Name)+" "+terms(m.Description)+" "+terms(m.Text)))
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
	o := &object{Class: class, Tenant: tenant, ID: KeyID(m.ID, m.Scope), Properties: p}
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
	Model       string   `json:"embed_model"`
	Dim         float64  `json:"embed_dim"`
	Additional  struct {
		ID           string                     `json:"id"`
		Score        json.Number                `json:"score"`
		Distance     *float64                   `json:"distance"`
		ExplainScore string                     `json:"explainScore"`
		Vectors      map[string]json.RawMessage `json:"vectors"`
	} `json:"_additional"`
}

// fieldList is the GraphQL selection that fills fields; vectors names the
// vectors to fetch with it.
func fieldList(vectors []string, extra string) string {
	var b strings.Builder
	b.WriteString(pID + " " + pName + " " + pDescription + " " + pText + " " + pType + " " + pScene + " " + pScope + " " +
		pTags + " " + pSource + " " + pMetadata + " " + pFavorite + " " + pCreated + " " + pUpdated + " " + pUses + " " +
		pDemand + " " + pDemandAt + " " + pHash + " " + pModel + " " + pDim + " _additional{id " + extra)
	if len(vectors) > 0 {
		b.WriteString(" vectors{" + strings.Join(vectors, " ") + "}")
	}
	b.WriteString("}")
	return b.String()
}

// leanList is the GraphQL selection of what identifies and filters a hit.
func leanList(extra string) string {
	return pID + " " + pType + " " + pScene + " " + pScope + " " + pTags + " " + pSource + " " + pCreated + " " +
		pFavorite + " " + pUses + " " + pDemand + " " + pDemandAt + " _additional{id " + extra + "}"
}

// decodeLean reads what leanList selects: a memory with only its id, scope,
// type, scene, tags, source, created_at, favorite and use counters.
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
	if f.Model != "" {
		dim := int(f.Dim)
		if dim <= 0 || float64(dim) != f.Dim {
			return bad("embed_dim %v", f.Dim)
		}
		m.Embedding = &memory.Embedding{Model: f.Model, Dim: dim}
		if withVector {
			raw, ok := f.Additional.Vectors[VectorName(f.Model, dim)]
			if !ok {
				return bad("its %s vector is missing", f.Model)
			}
			if err := json.Unmarshal(raw, &m.Embedding.Vector); err != nil {
				return bad("vector: %v", err)
			}
			if len(m.Embedding.Vector) != dim {
				return bad("vector has %d values but dim %d", len(m.Embedding.Vector), dim)
			}
		}
	}
	return m, nil
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}
