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

// OpenAIConfig configures an embedder for any OpenAI-compatible embeddings
// endpoint (OpenAI, vLLM, llama.cpp, TEI, LM Studio, Ollama's /v1).
type OpenAIConfig struct {
	// BaseURL is the API root, e.g. http://127.0.0.1:8080/v1; requests go to
	// BaseURL + "/embeddings". Required.
	BaseURL string
	// Model is the server's model name. Required.
	Model string
	// APIKey is sent as "Authorization: Bearer KEY"; empty sends no header.
	// It never appears in an error.
	APIKey string
	// Dimensions, when > 0, is sent as the "dimensions" request field (for
	// models that can shorten their vectors). Servers may ignore it.
	Dimensions int
	// BatchSize is the number of texts per request; 0 means DefaultBatchSize.
	BatchSize int
	// Timeout bounds each request attempt; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how often a request is retried on 429, 5xx and transport
	// errors; 0 means DefaultMaxRetries, negative means never.
	MaxRetries int
}

// OpenAI embeds through an OpenAI-compatible /embeddings endpoint. It is safe
// for concurrent use.
type OpenAI struct {
	model string
	dims  int
	batch int
	r     *remote
}

var _ Embedder = (*OpenAI)(nil)

// NewOpenAI validates cfg, fills its defaults and returns the embedder.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	model := strings.TrimSpace(cfg.Model)
	if model == "" {
		return nil, errors.New("openai embedder: model is required")
	}
	if strings.TrimSpace(cfg.BaseURL) == "" {
		return nil, errors.New("openai embedder: base URL is required")
	}
	url, err := httpjson.Endpoint(cfg.BaseURL, "/embeddings")
	if err != nil {
		return nil, fmt.Errorf("openai embedder: %w", err)
	}
	if err := checkSizes(cfg.BatchSize, cfg.Timeout); err != nil {
		return nil, fmt.Errorf("openai embedder: %w", err)
	}
	if cfg.Dimensions < 0 {
		return nil, fmt.Errorf("openai embedder: dimensions %d must not be negative", cfg.Dimensions)
	}
	return &OpenAI{
		model: model,
		dims:  cfg.Dimensions,
		batch: orDefault(cfg.BatchSize, DefaultBatchSize),
		r:     newRemote(url, cfg.APIKey, cfg.Timeout, cfg.MaxRetries),
	}, nil
}

// Model returns "openai:" followed by the configured model name.
func (o *OpenAI) Model() string { return "openai:" + o.model }

// Embed returns one vector per text, in order, sending BatchSize texts per
// request. Blank texts get nil vectors and are not sent; empty input sends nothing.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out, err := embedBatches(ctx, texts, o.batch, o.embedBatch)
	if err != nil {
		return nil, fmt.Errorf("openai embed %s via %s: %w", o.model, o.r.URL, err)
	}
	return out, nil
}

type openAIRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

type openAIResponse struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Error json.RawMessage `json:"error"`
}

func (o *OpenAI) embedBatch(ctx context.Context, batch []string) ([][]float32, error) {
	body, err := json.Marshal(openAIRequest{Model: o.model, Input: batch, EncodingFormat: "float", Dimensions: o.dims})
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	resp, err := o.r.post(ctx, body)
	if err != nil {
		return nil, err
	}
	return decodeOpenAI(resp, len(batch), o.r.APIKey)
}

// decodeOpenAI parses an embeddings response for n inputs and returns the
// vectors ordered by their "index" (array order when no item has one). Every
// index must be in [0, n) and appear once.
func decodeOpenAI(body []byte, n int, secret string) ([][]float32, error) {
	var resp openAIResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadResponse, err)
	}
	if len(resp.Error) > 0 && string(resp.Error) != "null" {
		return nil, fmt.Errorf("%w: server error: %s", ErrBadResponse, httpjson.Message(body, secret))
	}
	if len(resp.Data) != n {
		return nil, fmt.Errorf("%w: got %d embeddings for %d texts", ErrBadResponse, len(resp.Data), n)
	}
	out := make([][]float32, n)
	indexed := false
	for _, d := range resp.Data {
		if d.Index != nil {
			indexed = true
			break
		}
	}
	for i, d := range resp.Data {
		at := i
		if indexed {
			if d.Index == nil {
				return nil, fmt.Errorf("%w: item %d has no index", ErrBadResponse, i)
			}
			at = *d.Index
			if at < 0 || at >= n {
				return nil, fmt.Errorf("%w: index %d out of range [0, %d)", ErrBadResponse, at, n)
			}
			if out[at] != nil {
				return nil, fmt.Errorf("%w: index %d given twice", ErrBadResponse, at)
			}
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("%w: empty embedding at index %d", ErrBadResponse, at)
		}
		out[at] = d.Embedding
	}
	return out, nil
}

// checkSizes rejects negative batch sizes and timeouts; zero means the default.
func checkSizes(batch int, timeout time.Duration) error {
	if batch < 0 {
		return fmt.Errorf("batch size %d must not be negative", batch)
	}
	if timeout < 0 {
		return fmt.Errorf("timeout %s must not be negative", timeout)
	}
	return nil
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
