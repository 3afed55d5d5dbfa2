package embed

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNewOpenAI(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cfg       OpenAIConfig
		wantErr   string
		wantModel string
		wantURL   string
	}{
		{"minimal", OpenAIConfig{BaseURL: "http://127.0.0.1:8080/v1", Model: "text-embedding-3-small"}, "",
			"openai:text-embedding-3-small", "http://127.0.0.1:8080/v1/embeddings"},
		{"trailing slash", OpenAIConfig{BaseURL: "https://host.example/v1/", Model: "m"}, "", "openai:m", "https://host.example/v1/embeddings"},
		{"no model", OpenAIConfig{BaseURL: "http://127.0.0.1/v1"}, "model is required", "", ""},
		{"blank model", OpenAIConfig{BaseURL: "http://127.0.0.1/v1", Model: "  "}, "model is required", "", ""},
		{"no base URL", OpenAIConfig{Model: "m"}, "base URL is required", "", ""},
		{"bad scheme", OpenAIConfig{BaseURL: "ftp://127.0.0.1/v1", Model: "m"}, "scheme", "", ""},
		{"no host", OpenAIConfig{BaseURL: "http:///v1", Model: "m"}, "no host", "", ""},
		{"query", OpenAIConfig{BaseURL: "http://h/v1?x=1", Model: "m"}, "query", "", ""},
		{"unparsable", OpenAIConfig{BaseURL: "http://h:port/v1", Model: "m"}, "base URL", "", ""},
		{"negative batch", OpenAIConfig{BaseURL: "http://h/v1", Model: "m", BatchSize: -1}, "batch size", "", ""},
		{"negative timeout", OpenAIConfig{BaseURL: "http://h/v1", Model: "m", Timeout: -time.Second}, "timeout", "", ""},
		{"negative dimensions", OpenAIConfig{BaseURL: "http://h/v1", Model: "m", Dimensions: -3}, "dimensions", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := NewOpenAI(tc.cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.Model() != tc.wantModel || e.r.URL != tc.wantURL {
				t.Fatalf("model %q url %q", e.Model(), e.r.URL)
			}
		})
	}
}

func TestNewOpenAIDefaults(t *testing.T) {
	e, err := NewOpenAI(OpenAIConfig{BaseURL: "http://h/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if e.batch != DefaultBatchSize || e.r.Timeout != DefaultTimeout || e.r.MaxRetries != DefaultMaxRetries {
		t.Fatalf("defaults not applied: batch %d timeout %s retries %d", e.batch, e.r.Timeout, e.r.MaxRetries)
	}
	e, _ = NewOpenAI(OpenAIConfig{BaseURL: "http://h/v1", Model: "m", MaxRetries: -1})
	if e.r.MaxRetries != 0 {
		t.Fatalf("negative MaxRetries gave %d retries", e.r.MaxRetries)
	}
}

func TestOpenAIAuthHeader(t *testing.T) {
	for _, tc := range []struct {
		name, key, want string
	}{
		{"with key", "sk-test-123", "Bearer sk-test-123"},
		{"without key", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFake(t, openAIProtocol, ok(openAIProtocol, 4))
			if _, err := openAIProtocol.open(t, srv.URL, opts{key: tc.key}).Embed(context.Background(), []string{"x"}); err != nil {
				t.Fatal(err)
			}
			_, h := srv.request(0)
			if got := h.Get("Authorization"); got != tc.want {
				t.Fatalf("Authorization %q, want %q", got, tc.want)
			}
			if _, present := h["Authorization"]; present != (tc.want != "") {
				t.Fatalf("header present = %v", present)
			}
		})
	}
}

func TestOpenAIDimensionsField(t *testing.T) {
	for _, tc := range []struct {
		name string
		dims int
		want *int
	}{
		{"omitted when zero", 0, nil},
		{"sent when set", 256, new(256)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFake(t, openAIProtocol, ok(openAIProtocol, 4))
			if _, err := openAIProtocol.open(t, srv.URL, opts{dims: tc.dims}).Embed(context.Background(), []string{"x"}); err != nil {
				t.Fatal(err)
			}
			req, _ := srv.request(0)
			got := req.Dimensions
			if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
				t.Fatalf("dimensions %v, want %v", got, tc.want)
			}
		})
	}
}

// The key must not leak even when the server echoes it back.
func TestOpenAIKeyNeverInError(t *testing.T) {
	const key = "sk-secret-abcdef0123456789"
	echo := func(status int) handler {
		return func(_ int, _ fakeRequest, w http.ResponseWriter, r *http.Request) {
			openAIProtocol.writeError(w, status, "bad credentials: "+r.Header.Get("Authorization"))
		}
	}
	for _, tc := range []struct {
		name string
		h    handler
	}{
		{"401 echo", echo(http.StatusUnauthorized)},
		{"500 echo", echo(http.StatusInternalServerError)},
		{"200 with error echo", echo(http.StatusOK)},
		{"timeout", block},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFake(t, openAIProtocol, tc.h)
			_, err := openAIProtocol.open(t, srv.URL, opts{key: key, retries: 1, timeout: 50 * time.Millisecond}).
				Embed(context.Background(), []string{"x"})
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), key) || strings.Contains(err.Error(), key[:12]) {
				t.Fatalf("error leaks the key: %v", err)
			}
		})
	}
}

func TestDecodeOpenAI(t *testing.T) {
	for _, tc := range []struct {
		name    string
		body    string
		n       int
		want    [][]float32
		wantErr bool
	}{
		{"ordered by index", `{"data":[{"index":1,"embedding":[2]},{"index":0,"embedding":[1]}]}`, 2, [][]float32{{1}, {2}}, false},
		{"array order without indexes", `{"data":[{"embedding":[1]},{"embedding":[2]}]}`, 2, [][]float32{{1}, {2}}, false},
		{"null error ignored", `{"data":[{"index":0,"embedding":[1]}],"error":null}`, 1, [][]float32{{1}}, false},
		{"extra fields ignored", `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1.5e-3]}],"model":"m","usage":{"prompt_tokens":3}}`, 1, [][]float32{{1.5e-3}}, false},
		{"duplicate index", `{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[2]}]}`, 2, nil, true},
		{"index out of range", `{"data":[{"index":0,"embedding":[1]},{"index":2,"embedding":[2]}]}`, 2, nil, true},
		{"negative index", `{"data":[{"index":-1,"embedding":[1]}]}`, 1, nil, true},
		{"some indexes missing", `{"data":[{"index":1,"embedding":[1]},{"embedding":[2]}]}`, 2, nil, true},
		{"wrong count", `{"data":[{"index":0,"embedding":[1]}]}`, 2, nil, true},
		{"no data", `{}`, 1, nil, true},
		{"base64 string", `{"data":[{"index":0,"embedding":"AAAA"}]}`, 1, nil, true},
		{"error object", `{"error":{"message":"nope"}}`, 1, nil, true},
		{"empty body", ``, 1, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeOpenAI([]byte(tc.body), tc.n, "")
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

func TestOpenAIErrorNamesModelAndURL(t *testing.T) {
	srv := newFake(t, openAIProtocol, status(openAIProtocol, "no such model", "", 404))
	_, err := openAIProtocol.open(t, srv.URL, opts{}).Embed(context.Background(), texts(3))
	for _, want := range []string{"openai embed m", srv.URL + "/v1/embeddings", "HTTP 404", "no such model", "texts 1-3 of 3"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v lacks %q", err, want)
		}
	}
	if !slices.Equal(srv.batchSizes(), []int{3}) {
		t.Fatal(srv.batchSizes())
	}
}
