package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/httpjson"
)

// DefaultOllamaURL is where a local Ollama listens by default.
const DefaultOllamaURL = "http://127.0.0.1:11434"

// OllamaConfig configures an embedder for Ollama's native /api/embed endpoint.
type OllamaConfig struct {
	// BaseURL is the server root; requests go to BaseURL + "/api/embed".
	// Empty means DefaultOllamaURL.
	BaseURL string
	// Model is the Ollama model name, e.g. "nomic-embed-text". Required.
	Model string
	// BatchSize is the number of texts per request; 0 means DefaultBatchSize.
	BatchSize int
	// Timeout bounds each request attempt; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how often a request is retried on 429, 5xx and transport
	// errors; 0 means DefaultMaxRetries, negative means never.
	MaxRetries int
}

// Ollama embeds through Ollama's /api/embed endpoint. It is safe for
// concurrent use.
type Ollama struct {
	model string
	batch int
	r     *remote
}

var _ Embedder = (*Ollama)(nil)

// NewOllama validates cfg, fills its defaults and returns the embedder.
func NewOllama(cfg OllamaConfig) (*Ollama, error) {
	model := strings.TrimSpace(cfg.Model)
	if model == "" {
		return nil, errors.New("ollama embedder: model is required")
	}
	base := cfg.BaseURL
	if strings.TrimSpace(base) == "" {
		base = DefaultOllamaURL
	}
	url, err := httpjson.Endpoint(base, "/api/embed")
	if err != nil {
		return nil, fmt.Errorf("ollama embedder: %w", err)
	}
	if err := checkSizes(cfg.BatchSize, cfg.Timeout); err != nil {
		return nil, fmt.Errorf("ollama embedder: %w", err)
	}
	return &Ollama{
		model: model,
		batch: orDefault(cfg.BatchSize, DefaultBatchSize),
		r:     newRemote(url, "", cfg.Timeout, cfg.MaxRetries),
	}, nil
}

// Model returns "ollama:" followed by the configured model name.
func (o *Ollama) Model() string { return "ollama:" + o.model }

// Embed returns one vector per text, in order, sending BatchSize texts per
// request. Blank texts get nil vectors and are not sent; empty input sends nothing.
func (o *Ollama) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out, err := embedBatches(ctx, texts, o.batch, o.embedBatch)
	if err != nil {
		return nil, fmt.Errorf("ollama embed %s via %s: %w", o.model, o.r.URL, err)
	}
	return out, nil
}

type ollamaRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type ollamaResponse struct {
	Embeddings [][]float32     `json:"embeddings"`
	Error      json.RawMessage `json:"error"`
}

func (o *Ollama) embedBatch(ctx context.Context, batch []string) ([][]float32, error) {
	body, err := json.Marshal(ollamaRequest{Model: o.model, Input: batch})
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	resp, err := o.r.post(ctx, body)
	if err != nil {
		return nil, err
	}
	return decodeOllama(resp, len(batch))
}

// decodeOllama parses an /api/embed response for n inputs; the embeddings
// come in input order.
func decodeOllama(body []byte, n int) ([][]float32, error) {
	var resp ollamaResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadResponse, err)
	}
	if len(resp.Error) > 0 && string(resp.Error) != "null" {
		return nil, fmt.Errorf("%w: server error: %s", ErrBadResponse, httpjson.Message(body, ""))
	}
	if len(resp.Embeddings) != n {
		return nil, fmt.Errorf("%w: got %d embeddings for %d texts", ErrBadResponse, len(resp.Embeddings), n)
	}
	for i, v := range resp.Embeddings {
		if len(v) == 0 {
			return nil, fmt.Errorf("%w: empty embedding at %d", ErrBadResponse, i)
		}
	}
	return resp.Embeddings, nil
}
