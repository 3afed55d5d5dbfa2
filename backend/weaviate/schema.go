package weaviate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/engram-memory/engram/internal/httpjson"
	"github.com/engram-memory/engram/memory"
)

// SchemaVersion is recorded in the class description; a class written by a
// newer layout is refused, one of schema 2 is upgraded in place on open
// (migrate.go). Schema 3 added the episode, time and supersession fields
// and the searched context and day; schema 4 the text key repeats are found
// by (memory.TextKey).
const SchemaVersion = 4

// ErrIncompatible is returned by Open for a class that exists but was made
// with other settings (tokenizer, tenant key, schema) or not by Engram.
var ErrIncompatible = errors.New("weaviate class is incompatible")

// classMeta is what the class description records, as JSON.
type classMeta struct {
	Engram    int    `json:"engram"` // SchemaVersion
	Tokenizer string `json:"tokenizer"`
	TenantKey string `json:"tenant_key,omitempty"`
	// Neighbours and Dates are what the stored pContext and pDay hold
	// (index.ContextOptions, schema 3): a class written with others is
	// re-derived on open (migrate.go).
	Neighbours int  `json:"neighbours"`
	Dates      bool `json:"dates"`
}

type property struct {
	Name            string        `json:"name"`
	DataType        []string      `json:"dataType"`
	Tokenization    string        `json:"tokenization,omitempty"`
	IndexFilterable *bool         `json:"indexFilterable,omitempty"`
	IndexSearchable *bool         `json:"indexSearchable,omitempty"`
	IndexRange      *bool         `json:"indexRangeFilters,omitempty"`
	TextAnalyzer    *textAnalyzer `json:"textAnalyzer,omitempty"`
}

// textAnalyzer is a property's own query analysis. Weaviate's BM25 takes one
// IDF per term across the searched properties that share an analysis (their
// mean document frequency, bm25_searcher_block.go in v1.38.11); giving the
// context and the day analyses of their own keeps each property's statistics
// its own.
type textAnalyzer struct {
	ASCIIFold      bool   `json:"asciiFold,omitempty"`
	StopwordPreset string `json:"stopwordPreset,omitempty"`
}

func flag(b bool) *bool { return &b }

// properties is the class's property list for a tokenizer. Filterable text
// uses "field" tokenization (the whole value, trimmed: TestFilterExactness
// covers values with surrounding spaces, which the adapter re-checks).
func properties(tokenizer string) []property {
	searchRaw := tokenizer == TokenizerWord
	raw := func(name string) property {
		return property{Name: name, DataType: []string{"text"}, Tokenization: "word", IndexFilterable: flag(false), IndexSearchable: flag(searchRaw)}
	}
	keyword := func(name string, types ...string) property {
		return property{Name: name, DataType: types, Tokenization: "field", IndexFilterable: flag(true), IndexSearchable: flag(false)}
	}
	stored := func(name, typ string) property {
		p := property{Name: name, DataType: []string{typ}, IndexFilterable: flag(false)}
		if typ == "text" {
			p.Tokenization, p.IndexSearchable = "word", flag(false) // Weaviate's default; nothing is indexed
		}
		return p
	}
	ps := []property{
		keyword(pID, "text"),
		raw(pName), raw(pDescription), raw(pText),
		keyword(pType, "text"), keyword(pScene, "text"), keyword(pSource, "text"),
		keyword(pScope, "text[]"), keyword(pTags, "text[]"),
		stored(pMetadata, "text"),
		{Name: pFavorite, DataType: []string{"boolean"}, IndexFilterable: flag(true)},
		{Name: pCreated, DataType: []string{"date"}, IndexFilterable: flag(true), IndexRange: flag(true)},
		{Name: pUpdated, DataType: []string{"date"}, IndexFilterable: flag(true)},
		stored(pUses, "number"), stored(pDemand, "number"), stored(pDemandAt, "date"),
		keyword(pHash, "text"), keyword(pModel, "text"),
		stored(pDim, "int"),
		keyword(pTextKey, "text"),
	}
	if tokenizer == TokenizerEngram {
		// Filterable too: a filter on one term counts its documents, which
		// the keyword relevance bound needs (Backend.bound).
		ps = append(ps, property{Name: pTerms, DataType: []string{"text"}, Tokenization: "whitespace",
			IndexFilterable: flag(true), IndexSearchable: flag(true)})
	}
	return append(ps, episodeProperties(tokenizer)...)
}

// episodeProperties are the properties schema 3 added. The context and the
// day are searched, each with an analysis of its own (textAnalyzer): with
// TokenizerEngram they hold Engram's terms, which "lowercase" (the context)
// and ASCII-folded "lowercase" (the day, whose terms are ASCII) split back
// exactly as "whitespace" does the terms; with TokenizerWord the raw text,
// split as the other properties are, with their stopwords.
func episodeProperties(tokenizer string) []property {
	keyword := func(name string) property {
		return property{Name: name, DataType: []string{"text"}, Tokenization: "field", IndexFilterable: flag(true), IndexSearchable: flag(false)}
	}
	searched := func(name, tokenization string, ta *textAnalyzer) property {
		return property{Name: name, DataType: []string{"text"}, Tokenization: tokenization, IndexFilterable: flag(false),
			IndexSearchable: flag(true), TextAnalyzer: ta}
	}
	ps := []property{
		keyword(pEpisode),
		{Name: pSeq, DataType: []string{"number"}, IndexFilterable: flag(true), IndexRange: flag(true)},
		{Name: pOccurred, DataType: []string{"date"}, IndexFilterable: flag(true), IndexRange: flag(true)},
		keyword(pSupersedes),
		{Name: pSupersededBy, DataType: []string{"text"}, Tokenization: "word", IndexFilterable: flag(false), IndexSearchable: flag(false)},
		{Name: pSupersededAt, DataType: []string{"date"}, IndexFilterable: flag(true), IndexRange: flag(true)},
	}
	if tokenizer == TokenizerEngram {
		return append(ps,
			property{Name: pSpeaker, DataType: []string{"text"}, Tokenization: "word", IndexFilterable: flag(false), IndexSearchable: flag(false)},
			searched(pContext, "lowercase", nil),
			searched(pDay, "lowercase", &textAnalyzer{ASCIIFold: true}))
	}
	return append(ps,
		searched(pSpeaker, "word", nil),
		searched(pContext, "word", &textAnalyzer{StopwordPreset: "en"}),
		searched(pDay, "word", &textAnalyzer{StopwordPreset: "en"}))
}

// searchProps are the properties BM25 ranks, a memory's own words first (with
// TokenizerWord name, description, text and speaker, in Engram's field
// order), then its context and day (searchedContext).
func searchProps(tokenizer string) []string {
	if tokenizer == TokenizerEngram {
		return []string{pTerms}
	}
	return []string{pName, pDescription, pText, pSpeaker}
}

// vectorConfig is one named vector: Engram supplies the vectors.
func vectorConfig(c Config) map[string]any {
	ic := map[string]any{"distance": "cosine"}
	if c.EfConstruction != 0 {
		ic["efConstruction"] = c.EfConstruction
	}
	if c.MaxConnections != 0 {
		ic["maxConnections"] = c.MaxConnections
	}
	switch c.Quantizer {
	case QuantizerNone:
		ic["skipDefaultQuantization"] = true
	case QuantizerBQ:
		ic["bq"] = map[string]any{"enabled": true}
	case QuantizerRQ8, QuantizerRQ1:
		bits := 8
		if c.Quantizer == QuantizerRQ1 {
			bits = 1
		}
		ic["rq"] = map[string]any{"enabled": true, "bits": bits}
	}
	return map[string]any{
		"vectorizer":        map[string]any{"none": map[string]any{}},
		"vectorIndexType":   c.VectorIndex,
		"vectorIndexConfig": ic,
	}
}

// newClass is the class definition Open creates.
func (s *Store) newClass() map[string]any {
	c := s.cfg
	meta, _ := json.Marshal(s.meta())
	stop := "none" // Engram's tokenizer already dropped stopwords
	if c.Tokenizer == TokenizerWord {
		stop = "en"
	}
	class := map[string]any{
		"class":       c.Class,
		"description": string(meta),
		"properties":  properties(c.Tokenizer),
		"invertedIndexConfig": map[string]any{
			"bm25":      map[string]any{"k1": c.K1, "b": c.B},
			"stopwords": map[string]any{"preset": stop},
		},
		"replicationConfig": map[string]any{"factor": c.Replicas},
		// No vector exists until a model's first write adds one (ensureVector);
		// Weaviate needs the map to know the class uses named vectors.
		"vectorConfig": map[string]any{},
	}
	if c.TenantKey != "" {
		class["multiTenancyConfig"] = map[string]any{"enabled": true, "autoTenantCreation": true, "autoTenantActivation": true}
	} else {
		// Weaviate would make one shard per node; each keeps its own BM25
		// statistics (docs/weaviate.md, "A cluster").
		class["shardingConfig"] = map[string]any{"desiredCount": c.Shards}
	}
	return class
}

// meta is the class description this store writes.
func (s *Store) meta() classMeta {
	return classMeta{Engram: SchemaVersion, Tokenizer: s.cfg.Tokenizer, TenantKey: s.cfg.TenantKey,
		Neighbours: s.context.Neighbours, Dates: s.context.Dates}
}

// classInfo is the part of a class definition Open checks.
type classInfo struct {
	Class        string                     `json:"class"`
	Description  string                     `json:"description"`
	Properties   []property                 `json:"properties"`
	VectorConfig map[string]json.RawMessage `json:"vectorConfig"`
	MultiTenancy struct {
		Enabled bool `json:"enabled"`
	} `json:"multiTenancyConfig"`
	Replication struct {
		Factor int `json:"factor"`
	} `json:"replicationConfig"`
}

// ensureClass creates the class if absent, else checks that it is one this
// configuration can use, upgrades it if it is older (migrate.go), and learns
// its named vectors.
func (s *Store) ensureClass(ctx context.Context) error {
	info, err := s.getClass(ctx)
	if errors.Is(err, errNoClass) {
		cerr := s.c.do(ctx, http.MethodPost, "/v1/schema", nil, s.newClass(), nil)
		var se *StatusError
		if cerr != nil && !(errors.As(cerr, &se) && se.Code == http.StatusUnprocessableEntity && strings.Contains(se.Message, "already exists")) {
			return fmt.Errorf("create class %s: %w", s.cfg.Class, cerr)
		}
		info, err = s.getClass(ctx) // created, by us or a racing process
	}
	if err != nil {
		return err
	}
	meta, err := s.checkMeta(info)
	if err != nil {
		return err
	}
	if meta != s.meta() {
		if err := s.upgrade(ctx, info, meta); err != nil {
			return fmt.Errorf("%w (reopening resumes it)", err)
		}
		if info, err = s.getClass(ctx); err != nil {
			return err
		}
	}
	return s.check(info)
}

var errNoClass = errors.New("no such class")

func (s *Store) getClass(ctx context.Context) (*classInfo, error) {
	var info classInfo
	err := s.c.do(ctx, http.MethodGet, "/v1/schema/"+url.PathEscape(s.cfg.Class), nil, nil, &info)
	var se *StatusError
	if errors.As(err, &se) && se.Code == http.StatusNotFound {
		return nil, errNoClass
	}
	if err != nil {
		return nil, fmt.Errorf("read class %s: %w", s.cfg.Class, err)
	}
	if info.Class == "" { // Weaviate answers 200 with an empty body for a missing class
		return nil, errNoClass
	}
	return &info, nil
}

// incompatible is ErrIncompatible about this store's class.
func (s *Store) incompatible(format string, a ...any) error {
	return fmt.Errorf("%w: class %s: %s", ErrIncompatible, s.cfg.Class, fmt.Sprintf(format, a...))
}

// checkMeta reads the class description and refuses a class this
// configuration cannot use or upgrade.
func (s *Store) checkMeta(info *classInfo) (classMeta, error) {
	c := s.cfg
	var meta classMeta
	if err := json.Unmarshal([]byte(info.Description), &meta); err != nil || meta.Engram == 0 {
		return meta, s.incompatible("not made by Engram (its description is not Engram's)")
	}
	if meta.Engram > SchemaVersion {
		return meta, s.incompatible("schema %d is newer than this Engram's %d", meta.Engram, SchemaVersion)
	}
	if meta.Engram < minUpgradable {
		return meta, s.incompatible("schema %d is older than this Engram can upgrade (objects keyed by id alone): export it with the Engram that wrote it and import it into a new class", meta.Engram)
	}
	if meta.Tokenizer != c.Tokenizer {
		return meta, s.incompatible("made with tokenizer %q, asked for %q", meta.Tokenizer, c.Tokenizer)
	}
	if meta.TenantKey != c.TenantKey || info.MultiTenancy.Enabled != (c.TenantKey != "") {
		return meta, s.incompatible("made with tenant key %q, asked for %q", meta.TenantKey, c.TenantKey)
	}
	return meta, nil
}

// check refuses a class this configuration would misuse, and records its
// vectors.
func (s *Store) check(info *classInfo) error {
	c := s.cfg
	bad := s.incompatible
	meta, err := s.checkMeta(info)
	if err != nil {
		return err
	}
	if meta.Engram < SchemaVersion {
		return bad("schema %d was not upgraded to %d", meta.Engram, SchemaVersion)
	}
	have := map[string]property{}
	for _, p := range info.Properties {
		have[p.Name] = p
	}
	for _, want := range properties(c.Tokenizer) {
		got, ok := have[want.Name]
		if !ok {
			return bad("property %s is missing", want.Name)
		}
		if strings.Join(got.DataType, ",") != strings.Join(want.DataType, ",") || got.Tokenization != want.Tokenization {
			return bad("property %s is %v/%q, want %v/%q", want.Name, got.DataType, got.Tokenization, want.DataType, want.Tokenization)
		}
		if g, w := analysis(got.TextAnalyzer), analysis(want.TextAnalyzer); g != w {
			return bad("property %s has text analysis %+v, want %+v", want.Name, g, w)
		}
	}
	s.learnVectors(info)
	return nil
}

// analysis is a property's text analysis, none as the zero value.
func analysis(ta *textAnalyzer) textAnalyzer {
	if ta == nil {
		return textAnalyzer{}
	}
	return *ta
}

// knownVectors lists the class's named vectors.
func (s *Store) knownVectors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.vectors))
	for n := range s.vectors {
		out = append(out, n)
	}
	return out
}

func (s *Store) hasVector(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.vectors[name]
}

// maxSchemaAttempts bounds the re-reads of a class update that lost a race.
const maxSchemaAttempts = 20

// lostVectorText is how Weaviate 1.38 refuses a class update that would drop
// a named vector another writer added (TestConcurrentUse provokes it).
const lostVectorText = "missing config for vector"

// readOnlyText is how it refuses a class update while another is applied.
const readOnlyText = "store is read-only"

// EnsureVector adds the named vector of a model's vectors with dim
// dimensions unless the class has it. Put does this itself on a model's first
// write, but a class update while other processes write makes Weaviate lose
// their objects' index entries (Put repairs its own, see sendChecked): call
// it when opening with a known embedder, before any writes.
func (s *Store) EnsureVector(ctx context.Context, model string, dim int) error {
	if model == "" || dim <= 0 {
		return fmt.Errorf("%w: a vector needs a model and a positive dimension", memory.ErrInvalid)
	}
	return s.ensureVector(ctx, VectorName(model, dim))
}

// ensureVector adds the named vector for a model the first time one of its
// vectors is written. The class update is a read-modify-write of the schema;
// Weaviate serialises schema changes, and a writer that lost a race sees the
// vector on its re-read.
func (s *Store) ensureVector(ctx context.Context, name string) error {
	if s.hasVector(name) {
		return nil
	}
	err := s.updateClass(ctx, func(class map[string]any) bool {
		vc, _ := class["vectorConfig"].(map[string]any)
		if vc == nil {
			vc = map[string]any{}
		}
		if _, ok := vc[name]; ok {
			return false
		}
		vc[name] = vectorConfig(s.cfg)
		class["vectorConfig"] = vc
		return true
	})
	if err != nil {
		return fmt.Errorf("add vector %s: %w", name, err)
	}
	s.mu.Lock()
	s.vectors[name] = true
	s.mu.Unlock()
	return nil
}

// updateClass changes the class definition: a read-modify-write of the
// schema, edit saying whether it changed anything. Weaviate serialises
// schema changes; an update that lost a race to another process's (its
// change is "missing" from ours) or came while one is applied (the shard
// is read-only meanwhile) is read again and retried.
func (s *Store) updateClass(ctx context.Context, edit func(class map[string]any) bool) error {
	s.schemaMu.Lock()
	defer s.schemaMu.Unlock()
	for attempt := 0; ; attempt++ {
		var class map[string]any
		if err := s.c.do(ctx, http.MethodGet, "/v1/schema/"+url.PathEscape(s.cfg.Class), nil, nil, &class); err != nil {
			return err
		}
		if !edit(class) {
			return nil
		}
		s.writeMu.Lock()
		err := s.c.do(ctx, http.MethodPut, "/v1/schema/"+url.PathEscape(s.cfg.Class), nil, class, nil)
		s.writeMu.Unlock()
		if err == nil {
			return nil
		}
		var se *StatusError
		if !errors.As(err, &se) || se.Code != http.StatusUnprocessableEntity || attempt >= maxSchemaAttempts ||
			!(strings.Contains(se.Message, lostVectorText) || strings.Contains(se.Message, readOnlyText)) {
			return err
		}
		if !httpjson.Sleep(ctx, backoff(min(attempt+1, 4))) {
			return ctx.Err()
		}
	}
}

// Drop deletes the class and every memory in it. For tests and for
// replacing a store; there is no undo.
func (s *Store) Drop(ctx context.Context) error {
	err := s.c.do(ctx, http.MethodDelete, "/v1/schema/"+url.PathEscape(s.cfg.Class), nil, nil, nil)
	var se *StatusError
	if errors.As(err, &se) && se.Code == http.StatusNotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("drop class %s: %w", s.cfg.Class, err)
	}
	s.mu.Lock()
	s.vectors = map[string]bool{}
	s.mu.Unlock()
	s.termCounts.invalidateAll()
	return nil
}
