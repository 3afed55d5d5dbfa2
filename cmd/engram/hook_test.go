package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readHookInput(tb testing.TB, name string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "hooks", name))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// decodeClaude checks a Claude Code hook's stdout: empty, or one JSON object
// of the documented shape for the event.
func decodeClaude(tb testing.TB, out, event string) string {
	tb.Helper()
	if out == "" {
		return ""
	}
	var o struct {
		HookSpecificOutput *struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil || dec.More() {
		tb.Fatalf("hook output is not one JSON object of the documented shape: %v\n%s", err, out)
	}
	if o.HookSpecificOutput == nil || o.HookSpecificOutput.HookEventName != event || o.HookSpecificOutput.AdditionalContext == "" {
		tb.Fatalf("hook output for %s: %s", event, out)
	}
	return o.HookSpecificOutput.AdditionalContext
}

func TestHooksGolden(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		event       string // Claude Code event, or "" for the plain prompt hook
		args        []string
		env         string // ENGRAM_SCOPE
	}{
		{"session_start", "session-start.json", eventSessionStart, []string{"hook", "claude-code", "session-start"}, ""},
		{"session_start_cwd_scope", "session-start.json", eventSessionStart, []string{"hook", "claude-code", "session-start", "--cwd-scope", "project"}, ""},
		{"session_start_env_scope", "session-start.json", eventSessionStart, []string{"hook", "claude-code", "session-start"}, "project=billing"},
		{"session_start_budget", "session-start.json", eventSessionStart, []string{"hook", "claude-code", "session-start", "--budget", "200"}, ""},
		{"session_start_nothing", "session-start.json", eventSessionStart, []string{"hook", "claude-code", "session-start", "--scope", "project=none"}, ""},
		{"user_prompt", "user-prompt-submit.json", eventUserPromptSubmit, []string{"hook", "claude-code", "user-prompt-submit"}, ""},
		{"user_prompt_cwd_scope", "user-prompt-submit.json", eventUserPromptSubmit, []string{"hook", "claude-code", "user-prompt-submit", "--cwd-scope", "project"}, ""},
		{"user_prompt_unrelated", "user-prompt-unrelated.json", eventUserPromptSubmit, []string{"hook", "claude-code", "user-prompt-submit"}, ""},
		{"prompt_plain", "", "", []string{"hook", "prompt"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := deliveryStore(t)
			t.Setenv("ENGRAM_SCOPE", tc.env)
			in := "How do we deploy to production again?\n"
			if tc.input != "" {
				in = readHookInput(t, tc.input)
			}
			out, errs, code := engramRun(t, in, append([]string{"--db", db}, tc.args...)...)
			if code != 0 || errs != "" {
				t.Fatalf("exit %d, stderr %q", code, errs)
			}
			if tc.event != "" {
				decodeClaude(t, out, tc.event)
			}
			checkGolden(t, "hooks/"+tc.name+".golden", out)
		})
	}
}

// TestHooksNeverBreakTheHost: whatever goes wrong, a hook prints nothing on
// stdout, one line on stderr, and exits 0.
func TestHooksNeverBreakTheHost(t *testing.T) {
	start := readHookInput(t, "session-start.json")
	prompt := readHookInput(t, "user-prompt-submit.json")
	for _, tc := range []struct {
		name, stdin string
		args        []string
		env         string
		want        string
	}{
		{"not json", "hello", []string{"hook", "claude-code", "session-start"}, "", "not JSON"},
		{"empty input", "", []string{"hook", "claude-code", "user-prompt-submit"}, "", "not JSON"},
		{"wrong event", start, []string{"hook", "claude-code", "user-prompt-submit"}, "", "SessionStart"},
		{"unknown event", start, []string{"hook", "claude-code", "session-end"}, "", "session-end"},
		{"no event", start, []string{"hook", "claude-code"}, "", "want session-start"},
		{"unknown host", start, []string{"hook", "cursor"}, "", "cursor"},
		{"bare hook", start, []string{"hook"}, "", "claude-code or prompt"},
		{"unknown flag", start, []string{"hook", "claude-code", "session-start", "--colour"}, "", "colour"},
		{"bad flag value", prompt, []string{"hook", "claude-code", "user-prompt-submit", "--budget", "many"}, "", "budget"},
		{"zero budget", prompt, []string{"hook", "claude-code", "user-prompt-submit", "--budget", "0"}, "", "--budget"},
		{"relevance out of range", prompt, []string{"hook", "prompt", "--min-relevance", "7"}, "", "--min-relevance"},
		{"extra argument", prompt, []string{"hook", "prompt", "extra"}, "", "no arguments"},
		{"bad scope flag", start, []string{"hook", "claude-code", "session-start", "--scope", "novalue"}, "", "scope"},
		{"bad ENGRAM_SCOPE", start, []string{"hook", "claude-code", "session-start"}, "=oops", "scope"},
		{"unusable database", start, []string{"--db", "/nonexistent/dir/x.db", "hook", "claude-code", "session-start"}, "", "/nonexistent/dir"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := deliveryStore(t)
			t.Setenv("ENGRAM_SCOPE", tc.env)
			out, errs, code := engramRun(t, tc.stdin, append([]string{"--db", db}, tc.args...)...)
			if code != 0 || out != "" {
				t.Errorf("exit %d, stdout %q; want exit 0 and nothing", code, out)
			}
			if !strings.HasPrefix(errs, "engram hook: ") || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, tc.want) {
				t.Errorf("stderr %q: want one line naming %q", errs, tc.want)
			}
		})
	}
}

// TestClaudeSettingsExample parses the README's example settings, checks that
// every command it names is a real engram hook for its event, and runs each
// one on real hook input.
func TestClaudeSettingsExample(t *testing.T) {
	var settings struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	dec := json.NewDecoder(strings.NewReader(readHookInput(t, "claude-settings.json")))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&settings); err != nil {
		t.Fatalf("settings example: %v", err)
	}
	want := map[string]struct{ path, input string }{
		eventSessionStart:     {"engram hook claude-code session-start", "session-start.json"},
		eventUserPromptSubmit: {"engram hook claude-code user-prompt-submit", "user-prompt-submit.json"},
	}
	if len(settings.Hooks) != len(want) {
		t.Fatalf("events %v, want %v", settings.Hooks, want)
	}
	for event, groups := range settings.Hooks {
		w, ok := want[event]
		if !ok || len(groups) != 1 || len(groups[0].Hooks) != 1 {
			t.Fatalf("%s: unexpected hook groups %+v", event, groups)
		}
		h := groups[0].Hooks[0]
		if h.Type != "command" || h.Timeout <= 0 {
			t.Errorf("%s: type %q timeout %d", event, h.Type, h.Timeout)
		}
		argv := strings.Fields(h.Command)
		if argv[0] != "engram" {
			t.Fatalf("%s: command %q does not run engram", event, h.Command)
		}
		cmd, rest, err := newRoot(&env{}).Find(argv[1:])
		if err != nil || cmd.CommandPath() != w.path || cmd.RunE == nil {
			t.Fatalf("%s: %q resolves to %q (%v), want %q", event, h.Command, cmd.CommandPath(), err, w.path)
		}
		if err := cmd.ParseFlags(rest); err != nil || len(cmd.Flags().Args()) != 0 {
			t.Fatalf("%s: flags of %q: %v %v", event, h.Command, err, cmd.Flags().Args())
		}
		db := deliveryStore(t)
		out, errs, code := engramRun(t, readHookInput(t, w.input), append([]string{"--db", db}, argv[1:]...)...)
		if code != 0 || errs != "" {
			t.Fatalf("%s: exit %d, stderr %q", event, code, errs)
		}
		if ctx := decodeClaude(t, out, event); !strings.Contains(ctx, "Deploy process") {
			t.Errorf("%s: context lacks the deploy memory:\n%s", event, ctx)
		}
	}
}

// TestHookStdinNeverClosed: a host that never closes stdin gets nothing
// after --timeout, not a hung hook.
func TestHookStdinNeverClosed(t *testing.T) {
	db := deliveryStore(t)
	r, w := io.Pipe()
	defer w.Close()
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"--db", db, "hook", "claude-code", "session-start", "--timeout", "50ms"}, r, &out, &errb)
	if code != 0 || out.Len() != 0 || !strings.Contains(errb.String(), "timed out") || strings.Count(errb.String(), "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

// TestHooksThroughServer: with ENGRAM_URL set, the hooks ask the running
// server (no store to load per prompt) and print what the local path prints
// on an identical store.
func TestHooksThroughServer(t *testing.T) {
	t.Setenv("ENGRAM_API_KEYS", "")
	for _, tc := range []struct {
		input string
		args  []string
	}{
		{"session-start.json", []string{"hook", "claude-code", "session-start"}},
		{"user-prompt-submit.json", []string{"hook", "claude-code", "user-prompt-submit"}},
	} {
		in := readHookInput(t, tc.input)
		local, errs, code := engramRun(t, in, append([]string{"--db", deliveryStore(t)}, tc.args...)...)
		if code != 0 || errs != "" || local == "" {
			t.Fatalf("local %v: exit %d, stderr %q, stdout %q", tc.args, code, errs, local)
		}
		srv := startServe(t, deliveryStore(t))
		remote, errs, code := clientCLI(t, srv.url, "", in, tc.args...)
		if code != 0 || errs != "" {
			t.Fatalf("via server %v: exit %d, stderr %q", tc.args, code, errs)
		}
		if remote != local {
			t.Fatalf("%v differs:\nserver: %s\nlocal:  %s", tc.args, remote, local)
		}
	}
}

// TestHookPrompt: the prompt a hook embeds while the store opens is the one
// it then injects for, and the input is decoded once for both.
func TestHookPrompt(t *testing.T) {
	for _, c := range []struct {
		name   string
		prompt func(*hookInput) string
		raw    string
		want   string
	}{
		{"claude", userPrompt, `{"hook_event_name":"UserPromptSubmit","prompt":"which colour scheme?"}`, "which colour scheme?"},
		{"claude, another event", userPrompt, `{"hook_event_name":"SessionStart","prompt":"x"}`, ""},
		{"claude, not JSON", userPrompt, `which colour scheme?`, ""},
		{"plain", plainPrompt, "which colour scheme?\n", "which colour scheme?\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := &hookInput{raw: []byte(c.raw)}
			if got := c.prompt(in); got != c.want {
				t.Errorf("prompt %q, want %q", got, c.want)
			}
			if !in.decoded {
				return
			}
			in.raw = nil // a second decode would now fail or differ
			ci, err := in.claude(eventUserPromptSubmit)
			if (err == nil && ci.Prompt != c.want) || (err != nil) != (c.want == "") {
				t.Errorf("decoded again: %+v, %v", ci, err)
			}
		})
	}
}
