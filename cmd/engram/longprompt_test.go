package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// longPromptText is n bytes of pseudo-random words with a sentence about a
// cluster upgrade repeated through it.
func longPromptText(n int) string {
	var b strings.Builder
	x := uint32(7)
	for i := 0; b.Len() < n; i++ {
		if i%50 == 0 {
			b.WriteString("the kubernetes cluster upgrade failed on the staging nodes. ")
			continue
		}
		for range 3 + i%8 {
			x = x*1664525 + 1013904223
			b.WriteByte(byte('a' + x>>24%26))
		}
		b.WriteByte(' ')
	}
	return b.String()[:n]
}

// TestLongPrompt: a 5 MB prompt through inject (stdin) and the Claude Code
// hook answers, reduced, and the hook's --timeout holds it by a generous
// bound (a hook that runs out of time prints nothing and exits 0).
func TestLongPrompt(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "none")
	db := filepath.Join(t.TempDir(), "long.db")
	mustCLI(t, db, "", "add", "The kubernetes cluster upgrade needs the staging nodes drained first")
	mustCLI(t, db, "", "add", "Lunch is at noon on Fridays")
	prompt := longPromptText(5 << 20)

	var inj struct {
		Text     string
		Degraded []struct{ Stage, Reason string }
	}
	out := mustCLI(t, db, prompt, "inject", "-", "--json", "--min-relevance", "0.01")
	if err := json.Unmarshal([]byte(out), &inj); err != nil {
		t.Fatal(err)
	}
	reduced := false
	for _, d := range inj.Degraded {
		reduced = reduced || d.Stage == "query"
	}
	if !reduced || !strings.Contains(inj.Text, "kubernetes") {
		t.Fatalf("inject of 5 MB: text %q, degraded %v", inj.Text, inj.Degraded)
	}

	input, err := json.Marshal(map[string]string{"prompt": prompt, "session_id": "s", "cwd": t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, timeout := range []string{"20ms", "10s"} {
		start := time.Now()
		out, errs, code := cli(t, db, string(input), "hook", "claude-code", "user-prompt-submit", "--timeout", timeout, "--min-relevance", "0.01")
		d, _ := time.ParseDuration(timeout)
		if took := time.Since(start); code != 0 || took > d+10*time.Second {
			t.Fatalf("hook --timeout %s: exit %d after %v: %s", timeout, code, took, errs)
		}
		if timeout == "10s" && !strings.Contains(out, "kubernetes") {
			t.Errorf("hook --timeout 10s: %q %s", out, errs)
		}
	}
}
