package embed

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestNewOllama(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     OllamaConfig
		wantErr string
		wantURL string
	}{
		{"default URL", OllamaConfig{Model: "nomic-embed-text"}, "", DefaultOllamaURL + "/api/embed"},
		{"given URL", OllamaConfig{BaseURL: "http://10.0.0.2:11434/", Model: "m"}, "", "http://10.0.0.2:11434/api/embed"},
		{"no model", OllamaConfig{}, "model is required", ""},
		{"bad scheme", OllamaConfig{BaseURL: "unix:///tmp/sock", Model: "m"}, "scheme", ""},
		{"negative batch", OllamaConfig{Model: "m", BatchSize: -5}, "batch size", ""},
		{"negative timeout", OllamaConfig{Model: "m", Timeout: -time.Millisecond}, "timeout", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := NewOllama(tc.cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.r.URL != tc.wantURL || e.Model() != "ollama:"+strings.TrimSpace(tc.cfg.Model) {
				t.Fatalf("url %q model %q", e.r.URL, e.Model())
			}
			if e.batch != DefaultBatchSize || e.r.Timeout != DefaultTimeout || e.r.MaxRetries != DefaultMaxRetries {
				t.Fatal("defaults not applied")
			}
			if e.r.APIKey != "" {
				t.Fatal("ollama sends a key")
			}
		})
	}
}

func TestDecodeOllama(t *testing.T) {
	for _, tc := range []struct {
		name    string
		body    string
		n       int
		want    [][]float32
		wantErr bool
	}{
		{"two", `{"model":"m","embeddings":[[1,2],[3,4]],"total_duration":5}`, 2, [][]float32{{1, 2}, {3, 4}}, false},
		{"null error ignored", `{"embeddings":[[1]],"error":null}`, 1, [][]float32{{1}}, false},
		{"wrong count", `{"embeddings":[[1]]}`, 2, nil, true},
		{"missing", `{"model":"m"}`, 1, nil, true},
		{"empty vector", `{"embeddings":[[]]}`, 1, nil, true},
		{"old single embedding shape", `{"embedding":[1,2]}`, 1, nil, true},
		{"error string", `{"error":"model \"m\" not found, try pulling it first"}`, 1, nil, true},
		{"malformed", `{"embeddings":[[1,`, 1, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeOllama([]byte(tc.body), tc.n)
			if tc.wantErr {
				if !errors.Is(err, ErrBadResponse) {
					t.Fatalf("got %v, %v; want ErrBadResponse", got, err)
				}
				return
			}
			if err != nil || !equalVecs(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
