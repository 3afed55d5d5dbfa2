package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/memory"
)

// The library says what is wrong; the CLI says which command, flag or
// environment variable fixes it. These hints go to stderr, so the output a
// script reads is the same with or without them.

// reindexHint follows anything a reindex with the current model fixes.
const reindexHint = "run engram reindex to give the memories vectors from the current model"

// degradedHints are the fixes for a response's degraded stages, each once.
func degradedHints(ds []memory.Degraded) []string {
	var out []string
	for _, d := range ds {
		if h := degradedHint(d); h != "" && !contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

func degradedHint(d memory.Degraded) string {
	switch {
	case d.Stage == "hyde" && d.Reason == engram.ErrNoLLM.Error():
		return "set ENGRAM_LLM_URL and ENGRAM_LLM_MODEL for --hyde"
	case d.Stage == "rerank" && d.Reason == engram.ErrNoReranker.Error():
		return "set ENGRAM_RERANK_URL (or ENGRAM_RERANK=llm with ENGRAM_LLM_URL) for --rerank"
	case d.Stage == "vector" && (strings.Contains(d.Reason, "were not compared with the query's model") ||
		strings.HasPrefix(d.Reason, "no memory has a vector from model")),
		d.Stage == "mmr" && strings.HasPrefix(d.Reason, "no candidate has a stored vector"):
		return reindexHint
	case d.Stage == "vector" && (strings.Contains(d.Reason, "does not read this query's script") ||
		strings.Contains(d.Reason, "written in a script model")):
		return readerHint()
	}
	return ""
}

// readerHint names the built-in models that read every script, for a search
// whose model left out a query or memories it cannot read.
func readerHint() string {
	var names []string
	for n, e := range embed.Each() {
		if embed.ScriptsOf(e) == nil {
			names = append(names, "ENGRAM_EMBEDDER="+n)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return strings.Join(names, " or ") + " reads every script: set it, then run engram reindex to search these memories by meaning too"
}

// warnDeferred reports memories stored without vectors, and the fix.
func (e *env) warnDeferred(reason string) {
	if reason == "" {
		return
	}
	fmt.Fprintln(e.stderr, "engram: warning: "+reason)
	fmt.Fprintln(e.stderr, "engram: hint: "+reindexHint+" once the embedder answers")
}

// printHints writes hints to stderr.
func (e *env) printHints(hints []string) {
	for _, h := range hints {
		fmt.Fprintln(e.stderr, "engram: hint: "+h)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// repeatCommand is the command line that runs cmd again with the flags it
// was given (--db among them), except those named in skip, followed by
// extra: what a "more:" hint prints, ready to paste into a shell.
func repeatCommand(cmd *cobra.Command, skip []string, extra ...string) string {
	words := []string{cmd.CommandPath()}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if contains(skip, f.Name) {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				words = append(words, "--"+f.Name, shellQuote(v))
			}
			return
		}
		if f.Value.Type() == "bool" {
			words = append(words, "--"+f.Name+"="+f.Value.String())
			return
		}
		words = append(words, "--"+f.Name, shellQuote(f.Value.String()))
	})
	for _, w := range extra {
		words = append(words, shellQuote(w))
	}
	return strings.Join(words, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=,@+-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
