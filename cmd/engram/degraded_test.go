package main

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/engram-memory/engram/internal/tokenize"
)

// Issue 27: when the vector leg is missing, delivery (inject, the Claude Code
// user-prompt-submit hook, MCP's memory_search) holds the keyword relevance
// to the keyword-only bar and says so, in three states: no embedder, a
// remote embedder that refuses connections, one that never answers in time.

const (
	degradedMemory = "The nightly export job writes to the archive-7 bucket."
	// degradedMatch is a clear keyword match for degradedMemory.
	degradedMatch = "which bucket does the nightly export use"
	// degradedAbsent is about a topic the store lacks, sharing one word with
	// it: at bar 0 it gets the memory, so only the bar keeps it out.
	degradedAbsent = "how do I export my phone contacts"
)

// embedServer is a real OpenAI-compatible embeddings server on 127.0.0.1:
// it answers /v1/embeddings with bag-of-words vectors until hang is set, then
// holds every request until its client gives up.
type embedServer struct {
	*httptest.Server
	hang  atomic.Bool
	calls atomic.Int64
	quit  chan struct{} // closed at the test's end: held requests end
}

func newEmbedServer(tb testing.TB) *embedServer {
	tb.Helper()
	s := &embedServer{quit: make(chan struct{})}
	tok := tokenize.New(tokenize.DefaultOptions())
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
			http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		// The whole body is read first, so that the server notices the
		// client hanging up (the request's context ends then).
		body, err := io.ReadAll(r.Body)
		if s.hang.Load() {
			select { // never answers: the client's timeout ends it
			case <-r.Context().Done():
			case <-s.quit:
			}
			return
		}
		if err == nil {
			err = json.Unmarshal(body, &req)
		}
		if err != nil {
			http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		out := struct {
			Data  []item `json:"data"`
			Model string `json:"model"`
		}{Model: req.Model}
		for i, text := range req.Input {
			out.Data = append(out.Data, item{Index: i, Embedding: bagOfWords(tok, text)})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
	}))
	tb.Cleanup(s.Close)
	tb.Cleanup(func() { close(s.quit) }) // runs before Close, which waits for handlers
	return s
}

// bagOfWords is a text's terms hashed into 16 dimensions, L2-normalised: a
// deterministic stand-in for a served model.
func bagOfWords(tok *tokenize.Tokenizer, text string) []float32 {
	v := make([]float32, 16)
	for _, t := range tok.Tokens(text) {
		h := fnv.New32a()
		h.Write([]byte(t))
		v[h.Sum32()%16]++
	}
	var n float64
	for _, x := range v {
		n += float64(x * x)
	}
	if n == 0 {
		v[0], n = 1, 1
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

// degradedState sets the environment for one state and returns a store
// holding degradedMemory, and what the vector leg's degraded reason says.
type degradedState struct {
	name  string
	setup func(t *testing.T) (db, reason string)
}

var degradedStates = []degradedState{
	{"no embedder", func(t *testing.T) (string, string) {
		t.Setenv("ENGRAM_EMBEDDER", "none")
		return degradedStore(t), "no embedder configured"
	}},
	{"remote embedder refuses connections", func(t *testing.T) (string, string) {
		// The memory is embedded while the server answers; then its port is
		// closed, so every query's embedding meets a refused connection.
		srv := newEmbedServer(t)
		remoteEnv(t, srv.URL, "500ms")
		db := degradedStore(t)
		srv.Close()
		return db, "embedder openai:test-embed:"
	}},
	{"remote embedder times out", func(t *testing.T) (string, string) {
		srv := newEmbedServer(t)
		remoteEnv(t, srv.URL, "300ms")
		db := degradedStore(t)
		srv.hang.Store(true)
		t.Cleanup(func() {
			if srv.calls.Load() < 2 {
				t.Errorf("the embedding server saw %d requests: the queries never reached it", srv.calls.Load())
			}
		})
		return db, "embedder openai:test-embed: no answer within 300ms"
	}},
}

func remoteEnv(t *testing.T, url, timeout string) {
	t.Helper()
	t.Setenv("ENGRAM_EMBEDDER", "openai")
	t.Setenv("ENGRAM_EMBED_URL", url+"/v1")
	t.Setenv("ENGRAM_EMBED_MODEL", "test-embed")
	t.Setenv("ENGRAM_EMBED_API_KEY", "")
	t.Setenv("ENGRAM_EMBED_TIMEOUT", timeout)
}

// degradedStore is a new store holding degradedMemory, added by the CLI with
// the state's embedder.
func degradedStore(t *testing.T) string {
	t.Helper()
	t.Setenv("ENGRAM_SCOPE", "")
	t.Setenv("ENGRAM_URL", "")
	db := filepath.Join(t.TempDir(), "m.db")
	mustCLI(t, db, "", "add", degradedMemory)
	return db
}

// TestDegradedDelivery: in each degraded state, inject, the user-prompt-submit
// hook and MCP's memory_search deliver the clear keyword match and nothing for
// an absent topic, and the responses say the keyword-only bar applied.
func TestDegradedDelivery(t *testing.T) {
	surfaces := []struct {
		name    string
		deliver func(t *testing.T, db, prompt string) string // what the host receives
	}{
		{"inject", func(t *testing.T, db, prompt string) string {
			return mustCLI(t, db, "", "inject", prompt)
		}},
		{"user-prompt-submit hook", func(t *testing.T, db, prompt string) string {
			in, _ := json.Marshal(map[string]string{"session_id": "s1", "cwd": t.TempDir(),
				"hook_event_name": "UserPromptSubmit", "prompt": prompt})
			out, errs, code := engramRun(t, string(in), "--db", db, "hook", "claude-code", "user-prompt-submit")
			if code != 0 || errs != "" {
				t.Fatalf("hook: exit %d, stderr %q", code, errs)
			}
			return decodeClaude(t, out, eventUserPromptSubmit)
		}},
		{"mcp memory_search", func(t *testing.T, db, prompt string) string {
			cs, stop := mcpStdio(t, "--db", db, "mcp")
			defer stop()
			var resp struct {
				Results []struct{ Text string }
			}
			mcpCall(t, cs, "memory_search", map[string]any{"query": prompt}, &resp)
			var texts []string
			for _, r := range resp.Results {
				texts = append(texts, r.Text)
			}
			return strings.Join(texts, "\n")
		}},
	}
	for _, st := range degradedStates {
		t.Run(st.name, func(t *testing.T) {
			db, reason := st.setup(t)
			// The state is the one named, and the response says which bar held.
			var inj struct {
				Strategy     string
				Degraded     []struct{ Stage, Reason string }
				MinRelevance float64 `json:"min_relevance"`
			}
			if err := json.Unmarshal([]byte(mustCLI(t, db, "", "inject", degradedMatch, "--json", "--no-record")), &inj); err != nil {
				t.Fatal(err)
			}
			said := fmt.Sprint(inj.Degraded)
			if inj.Strategy != "bm25" || !strings.Contains(said, "{vector "+reason) ||
				!strings.Contains(said, "{relevance keyword-only") || inj.MinRelevance != 0.28 {
				t.Fatalf("strategy %s, bar %v, degraded %s; want bm25 under the keyword-only bar, the vector leg's reason %q",
					inj.Strategy, inj.MinRelevance, said, reason)
			}
			if out := mustCLI(t, db, "", "search", degradedMatch, "--no-record"); !strings.Contains(out, "degraded: relevance: keyword-only") {
				t.Errorf("search's explanation does not name the keyword-only bar:\n%s", out)
			}
			// Only the bar keeps the absent topic out.
			if out := mustCLI(t, db, "", "inject", degradedAbsent, "--min-relevance", "0", "--no-record"); !strings.Contains(out, "archive-7") {
				t.Fatalf("at bar 0 the absent-topic prompt matches nothing: %q", out)
			}
			for _, sf := range surfaces {
				t.Run(sf.name, func(t *testing.T) {
					if got := sf.deliver(t, db, degradedMatch); !strings.Contains(got, "archive-7 bucket") {
						t.Errorf("%q: delivered %q, want the memory", degradedMatch, got)
					}
					if got := sf.deliver(t, db, degradedAbsent); got != "" {
						t.Errorf("%q (absent topic): delivered %q, want nothing", degradedAbsent, got)
					}
				})
			}
		})
	}
}
