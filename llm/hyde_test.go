package llm

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestHyDE(t *testing.T) {
	const query = "which port does the staging database listen on?"
	tests := []struct {
		name    string
		answer  string
		want    string
		wantErr error
	}{
		{"trimmed", "\n  The staging Postgres listens on port 6543.  \n", "The staging Postgres listens on port 6543.", nil},
		{"reasoning removed", "<think>port? guess</think>\nStaging DB uses port 5433.", "Staging DB uses port 5433.", nil},
		{"empty", "", "", ErrEmptyCompletion},
		{"blank", " \n\t ", "", ErrEmptyCompletion},
		{"only reasoning", "<think>hmm, the user asks", "", ErrEmptyCompletion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newChatServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { completion(w, tt.answer) })
			got, err := HyDE(context.Background(), testClient(t, s, nil), "  "+query+" ")
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("HyDE = %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
			req := s.last.Load()
			if len(req.Messages) != 2 || req.Messages[0].Role != "system" ||
				!strings.Contains(req.Messages[1].Content, query) {
				t.Errorf("prompt does not carry the query: %+v", req.Messages)
			}
		})
	}
}

func TestHyDEBadInput(t *testing.T) {
	s := newChatServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { completion(w, "x") })
	c := testClient(t, s, nil)
	if _, err := HyDE(context.Background(), nil, "q"); err == nil {
		t.Error("nil client accepted")
	}
	if _, err := HyDE(context.Background(), c, "   "); err == nil {
		t.Error("empty query accepted")
	}
	if n := s.calls.Load(); n != 0 {
		t.Errorf("server called %d times for bad input", n)
	}
	fail := newChatServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { http.Error(w, "no", 403) })
	if _, err := HyDE(context.Background(), testClient(t, fail, nil), "q"); err == nil || !strings.Contains(err.Error(), "hyde") {
		t.Errorf("err = %v, want a hyde error", err)
	}
}

func TestStripReasoning(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"none", "answer", "answer"},
		{"leading", "<think>a</think>answer", "answer"},
		{"two blocks", "<think>a</think>x<think>b</think>y", "xy"},
		{"unclosed", "x<think>still going", "x"},
		{"stray close", "a</think>b", "a</think>b"},
		{"joined by removal", "<thi<think>x</think>nk>z", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StripReasoning(tt.in); got != tt.want {
				t.Errorf("StripReasoning(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzStripReasoning(f *testing.F) {
	for _, s := range []string{"", "<think>a</think>b", "<think>", "x<think>y</think><think>", "<thi<think></think>nk>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := StripReasoning(s)
		if strings.Contains(out, "<think>") || len(out) > len(s) {
			t.Fatalf("StripReasoning(%q) = %q", s, out)
		}
	})
}
