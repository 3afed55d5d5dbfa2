package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
)

func TestParseTranscript(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "hooks", "transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := parseTranscript(f)
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time { return time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC).Add(mustDuration(s)) }
	want := []engram.Message{
		{Speaker: "user", Text: "Which flowers did you plant by the porch?", OccurredAt: at("0s")},
		// Text blocks of one assistant message are one turn; thinking and the
		// tool call and its result are left out.
		{Speaker: "assistant", Text: "They're called Peruvian Lilies.\nThe notes say they bloom in May.", OccurredAt: at("6s")},
		{Speaker: "user", Text: "Lovely, they last for weeks.", OccurredAt: at("2m")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("turns:\n%+v\nwant\n%+v", got, want)
	}
}

func mustDuration(s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return d
}

// FuzzParseTranscript: any input gives turns with text and a valid time, or
// an error; never a panic.
func FuzzParseTranscript(f *testing.F) {
	seed, _ := os.ReadFile(filepath.Join("testdata", "hooks", "transcript.jsonl"))
	f.Add(string(seed))
	for _, s := range []string{"", "\n\n", `{"type":"user","message":{"content":5}}`, `{"type":"assistant","message":{"id":"a","content":[{"type":"text","text":" "}]}}`,
		`{"type":"user","timestamp":"9999-99-99","message":{"content":"x"}}`, `{"type":"user","timestamp":"0001-01-01T00:00:00Z","message":{"content":"x"}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		turns, err := parseTranscript(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, m := range turns {
			if strings.TrimSpace(m.Text) == "" || (m.Speaker != "user" && m.Speaker != "assistant") {
				t.Fatalf("turn %+v", m)
			}
			if !m.OccurredAt.IsZero() && (m.OccurredAt.Year() < 1678 || m.OccurredAt.Year() > 2261) {
				t.Fatalf("time out of range: %+v", m)
			}
		}
	})
}

// TestHooksStoreEpisode: the stop hook stores a session's turns as its
// episode, storing again adds nothing, and user-prompt-submit with
// --store-episode adds the turns written since, then injects.
func TestHooksStoreEpisode(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "none")
	t.Setenv("ENGRAM_SCOPE", "")
	t.Setenv("ENGRAM_URL", "")
	dir := t.TempDir()
	db := filepath.Join(dir, "hooks.db")
	transcript := filepath.Join(dir, "s-42.jsonl")
	seed, err := os.ReadFile(filepath.Join("testdata", "hooks", "transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(transcript, seed, 0o644); err != nil {
		t.Fatal(err)
	}
	input := func(event, prompt string) string {
		return `{"session_id":"s-42","transcript_path":` + strconvQuote(transcript) + `,"cwd":"/tmp","hook_event_name":"` + event + `","prompt":` + strconvQuote(prompt) + `}`
	}
	listing := func() string {
		out, _, code := engramRun(t, "", "--db", db, "list", "--episode", "s-42", "--order", "seq")
		if code != 0 {
			t.Fatalf("list: exit %d", code)
		}
		return out
	}
	for range 2 {
		out, errs, code := engramRun(t, input("Stop", ""), "--db", db, "hook", "claude-code", "stop")
		if code != 0 || out != "" || errs != "" {
			t.Fatalf("stop hook: exit %d, out %q, err %q", code, out, errs)
		}
		if got := listing(); strings.Count(got, "\n") != 3 || !strings.HasPrefix(got, "s-42:1 ") || !strings.Contains(got, "assistant: They're called Peruvian Lilies.") {
			t.Fatalf("the episode after the stop hook:\n%s", got)
		}
	}
	grown := string(seed) + `{"type":"assistant","uuid":"u10","timestamp":"2023-05-08T13:58:05.000Z","message":{"id":"msg_2","role":"assistant","content":[{"type":"text","text":"Peruvian lilies like morning sun."}]}}` + "\n"
	if err := os.WriteFile(transcript, []byte(grown), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := engramRun(t, input("UserPromptSubmit", "which flowers grow by the porch?"), "--db", db,
		"hook", "claude-code", "user-prompt-submit", "--store-episode", "--min-relevance", "0.05")
	if code != 0 || errs != "" || !strings.Contains(out, "Peruvian Lilies") {
		t.Fatalf("user-prompt-submit: exit %d, out %q, err %q", code, out, errs)
	}
	if got := listing(); strings.Count(got, "\n") != 4 || !strings.Contains(got, "s-42:4 ") {
		t.Fatalf("the episode after the grown transcript:\n%s", got)
	}
	// A hook input without a transcript: one line on stderr, exit 0.
	out, errs, code = engramRun(t, `{"session_id":"s-42","hook_event_name":"Stop"}`, "--db", db, "hook", "claude-code", "stop")
	if code != 0 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "transcript_path") {
		t.Fatalf("stop without a transcript: exit %d, out %q, err %q", code, out, errs)
	}
}

func strconvQuote(s string) string { return strconv.Quote(s) }
