package rerank

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/engram-memory/engram/internal/httpjson"
)

// Request defaults.
const (
	DefaultTimeout    = 30 * time.Second // per attempt
	DefaultMaxRetries = 2                // attempts after the first
)

// StatusError is a non-2xx answer from the provider. Message is the server's
// explanation, shortened, with the API key removed; Temporary reports a 429
// or a 5xx other than 501.
type StatusError = httpjson.StatusError

// HTTPConfig says where and how to reach a rerank endpoint.
type HTTPConfig struct {
	// BaseURL is the API root; requests go to BaseURL + "/rerank"
	// (for example "http://127.0.0.1:8080" for TEI, "https://host/v1" for Jina or vLLM).
	BaseURL string
	// Model is sent as "model" and names the reranker.
	Model string
	// APIKey, if set, is sent as a bearer token. It never appears in errors.
	APIKey string
	// Timeout bounds each attempt; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how many times a 429, 5xx or transport failure is
	// retried; 0 means DefaultMaxRetries, negative means never.
	MaxRetries int
}

// String describes the configuration without the API key.
func (c HTTPConfig) String() string {
	return httpjson.Describe("rerank.HTTPConfig", c.BaseURL, c.Model, c.APIKey)
}

// LogValue keeps the API key out of structured logs.
func (c HTTPConfig) LogValue() slog.Value {
	return httpjson.LogValue(c.BaseURL, c.Model, c.APIKey)
}

// HTTP is a cross-encoder behind a /rerank endpoint. It speaks the common
// protocol (Cohere, Jina, vLLM, Infinity: "documents" in, "results" out) and
// Hugging Face TEI's ("texts" in, a bare array out), switching to the latter
// for good the first time a server rejects a request for lacking "texts".
// It is safe for concurrent use.
type HTTP struct {
	model string
	p     *httpjson.Client
	tei   atomic.Bool
}

// NewHTTP checks cfg and returns a reranker for it.
func NewHTTP(cfg HTTPConfig) (*HTTP, error) {
	endpoint, err := httpjson.Endpoint(cfg.BaseURL, "/rerank")
	if err != nil {
		return nil, fmt.Errorf("rerank: %w", err)
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("rerank: no model named")
	}
	timeout, retries := httpjson.OrDefault(cfg.Timeout, DefaultTimeout, cfg.MaxRetries, DefaultMaxRetries)
	return &HTTP{
		model: cfg.Model,
		p:     &httpjson.Client{URL: endpoint, APIKey: cfg.APIKey, Timeout: timeout, MaxRetries: retries},
	}, nil
}

// Name returns "http:" and the model.
func (h *HTTP) Name() string { return "http:" + h.model }

type rerankRequest struct {
	Model           string   `json:"model"`
	Query           string   `json:"query"`
	Documents       []string `json:"documents"`
	TopN            int      `json:"top_n"`
	ReturnDocuments bool     `json:"return_documents"`
}

type teiRequest struct {
	Query     string   `json:"query"`
	Texts     []string `json:"texts"`
	Truncate  bool     `json:"truncate"`
	RawScores bool     `json:"raw_scores"`
}

// Rerank implements Reranker.
func (h *HTTP) Rerank(ctx context.Context, query string, docs []string, topN int) ([]Score, error) {
	if len(docs) == 0 {
		return nil, nil
	}
	n := limit(topN, len(docs))
	data, err := h.send(ctx, query, docs, n)
	if err != nil {
		return nil, fmt.Errorf("rerank: %s: %w", h.Name(), err)
	}
	scores, err := parseResults(data)
	if err == nil {
		scores, err = order(scores, len(docs), n)
	}
	if err != nil {
		return nil, fmt.Errorf("rerank: %s: %w", h.Name(), httpjson.RedactError(err, h.p.APIKey, ErrInvalidResponse))
	}
	return scores, nil
}

// send posts in the dialect last seen to work, falling back to TEI's once.
func (h *HTTP) send(ctx context.Context, query string, docs []string, n int) ([]byte, error) {
	tei := h.tei.Load()
	for {
		var req any = rerankRequest{Model: h.model, Query: query, Documents: docs, TopN: n}
		if tei {
			req = teiRequest{Query: query, Texts: docs, Truncate: true}
		}
		body, err := json.Marshal(req)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		data, err := h.p.Post(ctx, body)
		var se *StatusError
		if !tei && errors.As(err, &se) && wantsTexts(se) {
			tei = true
			h.tei.Store(true)
			continue
		}
		return data, err
	}
}

// wantsTexts recognises TEI refusing a body without its "texts" field.
func wantsTexts(se *StatusError) bool {
	return (se.Code == http.StatusUnprocessableEntity || se.Code == http.StatusBadRequest) &&
		strings.Contains(se.Message, "texts")
}

// resultItem is one scored document in any of the accepted answers.
type resultItem struct {
	Index          *int     `json:"index"`
	RelevanceScore *float64 `json:"relevance_score"`
	Score          *float64 `json:"score"`
}

// parseResults reads {"results": [...]} (Cohere, Jina, vLLM, Infinity),
// {"data": [...]} (Voyage) or a bare array (TEI); each item has "index" and
// "relevance_score" or "score".
func parseResults(data []byte) ([]Score, error) {
	trimmed := bytes.TrimSpace(data)
	var items []resultItem
	switch {
	case len(trimmed) > 0 && trimmed[0] == '[':
		if err := json.Unmarshal(trimmed, &items); err != nil {
			return nil, malformed(trimmed, err)
		}
	case len(trimmed) > 0 && trimmed[0] == '{':
		var obj struct {
			Results *[]resultItem   `json:"results"`
			Data    *[]resultItem   `json:"data"`
			Error   json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(trimmed, &obj); err != nil {
			return nil, malformed(trimmed, err)
		}
		switch {
		case obj.Results != nil:
			items = *obj.Results
		case obj.Data != nil:
			items = *obj.Data
		case len(obj.Error) > 0 && string(obj.Error) != "null":
			return nil, fmt.Errorf("%w: answer carries an error: %s", ErrInvalidResponse, httpjson.Message(trimmed, ""))
		default:
			return nil, fmt.Errorf("%w: answer has no \"results\" list (%s)", ErrInvalidResponse, httpjson.Preview(trimmed))
		}
	default:
		return nil, fmt.Errorf("%w: answer is not JSON (%s)", ErrInvalidResponse, httpjson.Preview(trimmed))
	}
	scores := make([]Score, len(items))
	for i, it := range items {
		if it.Index == nil {
			return nil, fmt.Errorf("%w: result %d has no index", ErrInvalidResponse, i)
		}
		s := it.RelevanceScore
		if s == nil {
			s = it.Score
		}
		if s == nil {
			return nil, fmt.Errorf("%w: result %d (index %d) has no relevance_score or score", ErrInvalidResponse, i, *it.Index)
		}
		scores[i] = Score{Index: *it.Index, Score: *s}
	}
	return scores, nil
}

// malformed explains a JSON decoding failure, naming the usual culprit: a
// server (often Python's json module) writing NaN or Infinity, which JSON
// cannot carry.
func malformed(data []byte, err error) error {
	for _, tok := range []string{"NaN", "Infinity"} {
		if bytes.Contains(data, []byte(tok)) {
			return fmt.Errorf("%w: answer holds a non-finite score (%s), which is not JSON: %w", ErrInvalidResponse, tok, err)
		}
	}
	return fmt.Errorf("%w: malformed JSON (%s): %w", ErrInvalidResponse, httpjson.Preview(data), err)
}
