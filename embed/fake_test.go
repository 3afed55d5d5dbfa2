package embed

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeVec is the deterministic vector the fake servers give a text.
func fakeVec(text string, dim int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	s := h.Sum64()
	v := make([]float32, dim)
	for i := range v {
		s = s*6364136223846793005 + 1442695040888963407
		v[i] = float32(int32(s>>32)) / (1 << 31)
	}
	return v
}

func fakeVecs(texts []string, dim int) [][]float32 {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = fakeVec(t, dim)
	}
	return out
}

// opts are the provider settings a test varies.
type opts struct {
	batch, retries int
	timeout        time.Duration
	key            string
	dims           int
	backoff        time.Duration // base backoff; default 1ms
	retryAfterCap  time.Duration // default MaxRetryAfter
}

// protocol is one wire protocol, spoken by both the client under test and its fake server.
type protocol struct {
	name string
	path string
	// parse decodes a request body strictly, as the real server would.
	parse func(body []byte) (fakeRequest, error)
	// write sends vecs as a successful response.
	write func(w http.ResponseWriter, vecs [][]float32)
	// writeError sends the protocol's error body with status.
	writeError func(w http.ResponseWriter, status int, msg string)
	// open builds the client against baseURL.
	open func(t testing.TB, baseURL string, o opts) Embedder
}

type fakeRequest struct {
	Model          string
	Input          []string
	EncodingFormat string
	Dimensions     *int
}

func tune(t testing.TB, r *remote, o opts) {
	t.Helper()
	r.BaseDelay = cmp(o.backoff, time.Millisecond)
	r.MaxDelay = 4 * r.BaseDelay
	r.MaxRetryAfter = cmp(o.retryAfterCap, MaxRetryAfter)
}

func cmp(v, def time.Duration) time.Duration {
	if v == 0 {
		return def
	}
	return v
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func strictDecode(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data")
	}
	return nil
}

var openAIProtocol = protocol{
	name: "openai",
	path: "/v1/embeddings",
	parse: func(body []byte) (fakeRequest, error) {
		var req struct {
			Model          string   `json:"model"`
			Input          []string `json:"input"`
			EncodingFormat string   `json:"encoding_format"`
			Dimensions     *int     `json:"dimensions"`
		}
		if err := strictDecode(body, &req); err != nil {
			return fakeRequest{}, err
		}
		if req.EncodingFormat != "float" {
			return fakeRequest{}, fmt.Errorf("encoding_format %q", req.EncodingFormat)
		}
		return fakeRequest{req.Model, req.Input, req.EncodingFormat, req.Dimensions}, nil
	},
	// write answers in reverse order, so clients must sort by index.
	write: func(w http.ResponseWriter, vecs [][]float32) {
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		data := make([]item, 0, len(vecs))
		for i := len(vecs) - 1; i >= 0; i-- {
			data = append(data, item{"embedding", i, vecs[i]})
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"object": "list", "data": data, "model": "m",
			"usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1},
		})
	},
	writeError: func(w http.ResponseWriter, status int, msg string) {
		writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}})
	},
	open: func(t testing.TB, baseURL string, o opts) Embedder {
		t.Helper()
		e, err := NewOpenAI(OpenAIConfig{BaseURL: baseURL + "/v1", Model: "m", APIKey: o.key, Dimensions: o.dims,
			BatchSize: o.batch, Timeout: o.timeout, MaxRetries: o.retries})
		if err != nil {
			t.Fatal(err)
		}
		tune(t, e.r, o)
		return e
	},
}

var ollamaProtocol = protocol{
	name: "ollama",
	path: "/api/embed",
	parse: func(body []byte) (fakeRequest, error) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := strictDecode(body, &req); err != nil {
			return fakeRequest{}, err
		}
		return fakeRequest{Model: req.Model, Input: req.Input}, nil
	},
	write: func(w http.ResponseWriter, vecs [][]float32) {
		writeJSON(w, http.StatusOK, map[string]any{"model": "m", "embeddings": vecs, "total_duration": 1, "prompt_eval_count": 1})
	},
	writeError: func(w http.ResponseWriter, status int, msg string) {
		writeJSON(w, status, map[string]string{"error": msg})
	},
	open: func(t testing.TB, baseURL string, o opts) Embedder {
		t.Helper()
		e, err := NewOllama(OllamaConfig{BaseURL: baseURL, Model: "m", BatchSize: o.batch, Timeout: o.timeout, MaxRetries: o.retries})
		if err != nil {
			t.Fatal(err)
		}
		tune(t, e.r, o)
		return e
	},
}

var protocols = []protocol{openAIProtocol, ollamaProtocol}

// handler answers the n-th request (1-based) of a fake server.
type handler func(n int, req fakeRequest, w http.ResponseWriter, r *http.Request)

// fakeServer is a real HTTP server on 127.0.0.1 speaking one protocol. It
// records every request it parsed.
type fakeServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []fakeRequest
	headers  []http.Header
}

func newFake(t testing.TB, p protocol, h handler) *fakeServer {
	t.Helper()
	f := &fakeServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != p.path {
			t.Errorf("%s: unexpected %s %s", p.name, r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: Content-Type %q", p.name, ct)
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		req, err := p.parse(body)
		if err != nil || req.Model != "m" || len(req.Input) == 0 {
			t.Errorf("%s: bad request %s: %v", p.name, body, err)
			p.writeError(w, http.StatusBadRequest, "bad request")
			return
		}
		f.mu.Lock()
		f.requests = append(f.requests, req)
		f.headers = append(f.headers, r.Header.Clone())
		n := len(f.requests)
		f.mu.Unlock()
		h(n, req, w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

// count returns how many requests the server has parsed.
func (f *fakeServer) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

// sent returns every text the server received, in order.
func (f *fakeServer) sent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.requests {
		out = append(out, r.Input...)
	}
	return out
}

// request returns the i-th request and its headers.
func (f *fakeServer) request(i int) (fakeRequest, http.Header) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[i], f.headers[i]
}

func (f *fakeServer) batchSizes() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int
	for _, r := range f.requests {
		out = append(out, len(r.Input))
	}
	return out
}

// ok answers every request with the fake vectors of dimension dim.
func ok(p protocol, dim int) handler {
	return func(_ int, req fakeRequest, w http.ResponseWriter, _ *http.Request) {
		p.write(w, fakeVecs(req.Input, dim))
	}
}

// block waits until the client goes away (or a long while).
func block(_ int, _ fakeRequest, _ http.ResponseWriter, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(5 * time.Second):
	}
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("text number %d", i)
	}
	return out
}

func equalVecs(a, b [][]float32) bool {
	return slices.EqualFunc(a, b, func(x, y []float32) bool { return slices.Equal(x, y) })
}
