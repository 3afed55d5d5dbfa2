// Package llm is a client for OpenAI-compatible chat completion endpoints
// (OpenAI, Ollama, vLLM, llama.cpp, LM Studio), used by the optional recall
// stages: HyDE query rewriting and LLM-as-reranker.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/httpjson"
)

// Request defaults.
const (
	DefaultTimeout    = 60 * time.Second // per attempt; completions are slow
	DefaultMaxRetries = 2                // attempts after the first
)

// StatusError is a non-2xx answer from the provider. Message is the server's
// explanation, shortened, with the API key removed; Temporary reports a 429
// or a 5xx other than 501.
type StatusError = httpjson.StatusError

// ErrEmptyCompletion is returned where a non-empty answer was needed and the
// model gave none.
var ErrEmptyCompletion = errors.New("empty completion")

// Config says where and how to reach a chat model.
type Config struct {
	// BaseURL is the API root; requests go to BaseURL + "/chat/completions"
	// (for example "http://127.0.0.1:11434/v1").
	BaseURL string
	// Model is sent as "model" and names the client.
	Model string
	// APIKey, if set, is sent as a bearer token. It never appears in errors.
	APIKey string
	// Timeout bounds each attempt; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how many times a 429, 5xx or transport failure is
	// retried; 0 means DefaultMaxRetries, negative means never.
	MaxRetries int
	// Temperature is sent as is, in [0, 2]; 0 asks for the most likely answer.
	Temperature float64
	// MaxTokens caps the answer's length; 0 leaves it to the server.
	MaxTokens int
}

// String describes the configuration without the API key.
func (c Config) String() string {
	return httpjson.Describe("llm.Config", c.BaseURL, c.Model, c.APIKey)
}

// LogValue keeps the API key out of structured logs.
func (c Config) LogValue() slog.Value {
	return httpjson.LogValue(c.BaseURL, c.Model, c.APIKey)
}

// Client sends chat completion requests. It is safe for concurrent use.
type Client struct {
	model       string
	temperature float64
	maxTokens   int
	p           *httpjson.Client
}

// New checks cfg and returns a client for it.
func New(cfg Config) (*Client, error) {
	endpoint, err := httpjson.Endpoint(cfg.BaseURL, "/chat/completions")
	if err != nil {
		return nil, fmt.Errorf("llm: %w", err)
	}
	switch {
	case strings.TrimSpace(cfg.Model) == "":
		return nil, errors.New("llm: no model named")
	case math.IsNaN(cfg.Temperature) || cfg.Temperature < 0 || cfg.Temperature > 2:
		return nil, fmt.Errorf("llm: temperature %v outside [0, 2]", cfg.Temperature)
	case cfg.MaxTokens < 0:
		return nil, fmt.Errorf("llm: negative max tokens %d", cfg.MaxTokens)
	}
	timeout, retries := httpjson.OrDefault(cfg.Timeout, DefaultTimeout, cfg.MaxRetries, DefaultMaxRetries)
	return &Client{
		model:       cfg.Model,
		temperature: cfg.Temperature,
		maxTokens:   cfg.MaxTokens,
		p:           &httpjson.Client{URL: endpoint, APIKey: cfg.APIKey, Timeout: timeout, MaxRetries: retries},
	}, nil
}

// Model returns the model name given in Config.
func (c *Client) Model() string { return c.model }

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	Temperature float64       `json:"temperature"`
	MaxTokens   int           `json:"max_tokens,omitempty"`
	Stream      bool          `json:"stream"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Error json.RawMessage `json:"error"`
}

// Complete sends one system and one user message and returns the first
// choice's content as the model wrote it (possibly empty). An empty system
// prompt is left out.
func (c *Client) Complete(ctx context.Context, system, user string) (string, error) {
	req := chatRequest{
		Model:       c.model,
		Temperature: c.temperature,
		MaxTokens:   c.maxTokens,
	}
	if system != "" {
		req.Messages = append(req.Messages, chatMessage{Role: "system", Content: system})
	}
	req.Messages = append(req.Messages, chatMessage{Role: "user", Content: user})
	body, err := json.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("llm: encode request: %w", err)
	}
	data, err := c.p.Post(ctx, body)
	if err != nil {
		return "", fmt.Errorf("llm: %s: %w", c.model, err)
	}
	content, err := parseChat(data)
	if err != nil {
		return "", fmt.Errorf("llm: %s: %w", c.model, httpjson.RedactError(err, c.p.APIKey))
	}
	return content, nil
}

// parseChat extracts choices[0].message.content from a chat completion.
func parseChat(data []byte) (string, error) {
	var r chatResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return "", fmt.Errorf("answer is not a chat completion (%s): %w", httpjson.Preview(data), err)
	}
	if len(r.Error) > 0 && string(r.Error) != "null" {
		return "", fmt.Errorf("answer carries an error: %s", httpjson.Message(data, ""))
	}
	if len(r.Choices) == 0 {
		return "", fmt.Errorf("answer has no choices (%s)", httpjson.Preview(data))
	}
	return decodeContent(r.Choices[0].Message.Content)
}

// decodeContent accepts content as a string, null, or a list of parts of
// which the text ones are joined.
func decodeContent(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("message content is neither text nor a list of parts: %w", err)
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "" || p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}
