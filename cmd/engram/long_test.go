package main

import (
	"strings"
	"testing"
)

// TestLongMemoriesDelivered: inject, brief, search --context and both Claude
// Code hooks deliver a memory longer than their budget as an excerpt — the
// passage that answers, marked with the id that fetches the rest — instead of
// dropping it (issue 13: a 1,800-character answer gave an empty injection).
func TestLongMemoriesDelivered(t *testing.T) {
	const vitamin = "01HZX000000000000000VITD01"
	for _, tc := range []struct {
		name, stdin string
		args        []string
		event       string   // a Claude Code hook's event: its output is JSON
		want        []string // in the delivered text
	}{
		{"inject_long", "", []string{"inject", "Does vitamin D supplementation reduce fracture risk?"}, "",
			[]string{"reduced fracture risk by 18%", "[excerpt of " + vitamin + "]"}},
		{"inject_long_json", "", []string{"inject", "Does vitamin D supplementation reduce fracture risk?", "--json"}, "",
			[]string{`"excerpt": "…`, "reduced fracture risk by 18%"}},
		{"inject_long_two", "", []string{"inject", "how do we roll back a release after the canary?", "--scope", "project=engram", "--budget", "600"}, "",
			[]string{"--rollback flag", "[excerpt of 01HZX000000000000000RUNBK1]"}},
		{"brief_long", "", []string{"brief"}, "",
			[]string{"[excerpt of " + vitamin + "]", "The user prefers dark themes"}},
		{"brief_long_budget", "", []string{"brief", "--budget", "600"}, "",
			[]string{"[excerpt of " + vitamin + "]"}},
		{"search_context_long", "", []string{"search", "vitamin D fracture risk", "--context", "--budget", "500", "--no-record"}, "",
			[]string{"fracture risk", "[excerpt of " + vitamin + "]"}},
		{"hook_user_prompt_long", `{"hook_event_name":"UserPromptSubmit","prompt":"Does vitamin D supplementation reduce fracture risk?"}`,
			[]string{"hook", "claude-code", "user-prompt-submit"}, eventUserPromptSubmit,
			[]string{"reduced fracture risk by 18%", "[excerpt of " + vitamin + "]"}},
		{"hook_session_start_long", `{"hook_event_name":"SessionStart","source":"startup"}`,
			[]string{"hook", "claude-code", "session-start", "--budget", "800"}, eventSessionStart,
			[]string{"[excerpt of " + vitamin + "]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := longStore(t)
			out, errs, code := engramRun(t, tc.stdin, append([]string{"--db", db}, tc.args...)...)
			if code != 0 || errs != "" {
				t.Fatalf("exit %d, stderr %q", code, errs)
			}
			text := out
			if tc.event != "" {
				text = decodeClaude(t, out, tc.event)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("delivery lacks %q:\n%s", w, text)
				}
			}
			checkGolden(t, "delivery/"+tc.name+".golden", out)
		})
	}
}
