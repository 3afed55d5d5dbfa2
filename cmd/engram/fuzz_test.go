package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/memory"
)

// fuzzStore is a small real store the CLI fuzz targets search.
func fuzzStore(f *testing.F) *engram.DB {
	db, err := engram.Open(context.Background(), filepath.Join(f.TempDir(), "fuzz.db"), engram.Options{NoEmbedder: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	if _, err := db.Add(context.Background(),
		&engram.Memory{Text: "the deploy key lives in the vault", Scope: map[string]string{"project": "engram"}},
		&engram.Memory{Text: "tasks_claim must run inside a transaction"}); err != nil {
		f.Fatal(err)
	}
	return db
}

// FuzzHookInput: whatever Claude Code's hook input holds, the hook's parsing,
// scoping and recall never panic, and what it would print is either nothing
// or one JSON object of Claude Code's output form.
func FuzzHookInput(f *testing.F) {
	db := fuzzStore(f)
	for _, s := range []string{`{"prompt": "where is the deploy key", "cwd": "/work/engram", "hook_event_name": "UserPromptSubmit"}`,
		`{"prompt": "", "cwd": ""}`, `{"cwd": "/work/b,c=d", "prompt": "vault"}`, `{"cwd": "/", "prompt": "x"}`, `[]`, `{"prompt": 5}`,
		`{"hook_event_name": "SessionStart"}`, "\xff", `{"prompt": "\u0000 vault", "cwd": "/tmp/\u00a0"}`} {
		f.Add([]byte(s))
	}
	flags := &hookFlags{cwdScope: "project", budget: 500, limit: 5}
	f.Fuzz(func(t *testing.T, in []byte) {
		ci, err := readClaude(in, eventUserPromptSubmit)
		if err != nil {
			return
		}
		text, err := inject(context.Background(), db, flags, ci.Prompt, ci.Cwd)
		if err != nil {
			if !errors.Is(err, engram.ErrInvalid) && !errors.Is(err, engram.ErrInvalidQuery) && !errors.Is(err, engram.ErrScope) {
				t.Fatalf("input %q: an error that is not the input's: %v", in, err)
			}
			return
		}
		var out bytes.Buffer
		if err := writeClaude(&out, eventUserPromptSubmit, text); err != nil {
			t.Fatal(err)
		}
		if out.Len() > 0 {
			var o claudeOutput
			if err := json.Unmarshal(out.Bytes(), &o); err != nil || o.HookSpecificOutput.AdditionalContext != text {
				t.Fatalf("hook output %q: %v", out.String(), err)
			}
		}
	})
}

// FuzzBatchQuery: any line of a --batch file decodes to a query or an error
// that says the line is invalid, and a query it accepts is answered (or
// refused as invalid), never a panic or a store error.
func FuzzBatchQuery(f *testing.F) {
	db := fuzzStore(f)
	for _, s := range []string{`{"qid": "a", "query": "deploy"}`, `{"query": "x", "limit": 100000}`, `{"query": "x", "since": "2500-01-01T00:00:00Z"}`,
		`{"query": "x", "vector_weight": 1e308}`, `{"query": "x", "scope": {"a": "b,c"}}`, `{"query": "x", "tags": null}`, `{"nope": 1}`, `1`, `{"query": "x", "mode": "both"}`} {
		f.Add([]byte(s))
	}
	base := memory.Query{Limit: 10, NoRecord: true}
	f.Fuzz(func(t *testing.T, line []byte) {
		q, err := batchQuery(base, line)
		if err != nil {
			if !errors.Is(err, engram.ErrInvalidQuery) {
				t.Fatalf("line %q: error %v does not say the query is invalid", line, err)
			}
			return
		}
		q.NoRecord = true
		if _, err := db.Search(context.Background(), q); err != nil && !errors.Is(err, engram.ErrInvalidQuery) {
			t.Fatalf("line %q: %v", line, err)
		}
	})
}

// FuzzSearchTimes: the CLI's --since and --until (timestamps, dates, ages)
// never panic, and a time outside what a store holds is refused with an
// error that says the query is invalid, never wrapped into another year.
func FuzzSearchTimes(f *testing.F) {
	db := fuzzStore(f)
	for _, s := range [][2]string{{"7d", ""}, {"2026-01-02", "2026-01-03"}, {"0001-01-01T00:00:00Z", ""}, {"", "2500-01-01"},
		{"106751d", ""}, {"1e9h", "-1d"}, {"9999-12-31T23:59:59Z", ""}, {"1677-09-21T00:12:43Z", ""}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, since, until string) {
		sf := &searchFlags{limit: 10, since: since, until: until, noRecord: true}
		cmd := &cobra.Command{}
		cmd.Flags().Float64("vector-weight", 0, "")
		cmd.Flags().Float64("lambda", 0, "")
		q, err := sf.query(cmd)
		if err != nil {
			return
		}
		q.Query = "deploy"
		_, err = db.Search(context.Background(), q)
		if err != nil && !errors.Is(err, engram.ErrInvalidQuery) {
			t.Fatalf("since %q until %q: %v", since, until, err)
		}
		if err == nil {
			if q.Since != nil && memory.CheckTime("since", *q.Since) != nil {
				t.Fatalf("since %q = %v was searched with", since, q.Since)
			}
			if q.Until != nil && memory.CheckTime("until", *q.Until) != nil {
				t.Fatalf("until %q = %v was searched with", until, q.Until)
			}
		}
	})
}
