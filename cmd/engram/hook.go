package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/format"
	"github.com/engram-memory/engram/internal/jsonerr"
	"github.com/engram-memory/engram/memory"
)

func init() { register(newHook) }

// Hooks run inside an agent host on every session or prompt, so they must
// never break it: on any error they print nothing on stdout, one line on
// stderr, and exit 0.

// hookFlags are the options every hook takes.
type hookFlags struct {
	scope    []string
	cwdScope string
	budget   int
	limit    int
	minRel   float64
	minRelOn bool // --min-relevance given: else the model's bar
	timeout  time.Duration
	// storeEpisode stores the session's turns (Claude Code's transcript) as
	// an episode before the hook's own work.
	storeEpisode bool
}

// Headers introduce what a hook adds, so the model knows where it came from;
// excerptNote follows a delivery that shows part of a long memory.
const (
	briefHeader  = "Memories from earlier sessions (Engram briefing):\n"
	injectHeader = "Memories that may be relevant to this prompt (Engram):\n"
	excerptNote  = "(A line ending in [excerpt of ID] shows part of a longer memory: fetch the whole by its id, with memory_get or engram get ID.)\n"
)

// withNote adds excerptNote to a delivery's text when it cut a memory.
func withNote(text string, results []engram.Result) string {
	for _, r := range results {
		if r.Excerpt != "" {
			return text + excerptNote
		}
	}
	return text
}

// Claude Code hook events.
const (
	eventSessionStart     = "SessionStart"
	eventUserPromptSubmit = "UserPromptSubmit"
	eventStop             = "Stop"
)

// maxHookInput bounds what a hook reads from stdin.
const maxHookInput = 8 << 20

func newHook(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "hook",
		Short: "Agent host hooks: session-start briefing and per-prompt injection",
		Long: `Hooks for agent hosts. They read the host's input on stdin and print what
the host adds to the model's context. On any error a hook prints nothing on
stdout, one line on stderr, and exits 0: memory must never break the host.

  engram hook claude-code session-start       Claude Code SessionStart → brief
  engram hook claude-code user-prompt-submit  Claude Code UserPromptSubmit → inject
  engram hook claude-code stop                Claude Code Stop → store the session's turns
  engram hook prompt                          any host: prompt text on stdin → inject

--store-episode (Claude Code hooks) stores the session's conversation as an
episode first: each turn the user typed or the assistant wrote (no tool calls,
tool output or thinking) from the session's transcript, the episode named by
the session id, each turn at its position, so storing again only adds what is
new. The stop hook always does.

Scope: --scope key=value flags, else $ENGRAM_SCOPE ("k=v,k=v"), else the whole
store; --cwd-scope KEY adds KEY=<base name of the working directory> (the
hook input's cwd for Claude Code), e.g. --cwd-scope project.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, a []string) error {
			hookFail(e, fmt.Errorf("unknown hook %q: want claude-code or prompt", strings.Join(a, " ")))
			return nil
		},
	}
	cc := &cobra.Command{
		Use:   "claude-code EVENT",
		Short: "Claude Code hooks: session-start, user-prompt-submit",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, a []string) error {
			hookFail(e, fmt.Errorf("unknown Claude Code hook %q: want session-start, user-prompt-submit or stop", strings.Join(a, " ")))
			return nil
		},
	}
	cc.AddCommand(
		viaDaemon(hookCommand(e, "session-start", "Claude Code SessionStart: print a briefing as additionalContext", engram.DefaultBriefBudget, runSessionStart, nil)),
		viaDaemon(hookCommand(e, "user-prompt-submit", "Claude Code UserPromptSubmit: print relevant memories as additionalContext", engram.DefaultInjectBudget, runUserPrompt, userPrompt)),
		hookCommand(e, "stop", "Claude Code Stop: store the session's turns as an episode", engram.DefaultInjectBudget, runStop, nil),
	)
	c.AddCommand(cc, viaDaemon(hookCommand(e, "prompt", "Any host: read a prompt on stdin, print the relevant memories or nothing", engram.DefaultInjectBudget, runPlainPrompt, plainPrompt)))
	for _, sub := range append([]*cobra.Command{c, cc}, append(cc.Commands(), c.Commands()...)...) {
		sub.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
			hookFail(e, err)
			return nil // exit 0: a misconfigured hook must not break the host
		})
	}
	return c
}

// hookRun is one hook's work: read the input, write the output.
type hookRun func(ctx context.Context, e *env, db store, f *hookFlags, in *hookInput) error

// hookInput is a hook's input as read, and what decoding it as a Claude
// Code event gave: decoded once, whether first for the prompt to embed
// while the store opens or by the hook.
type hookInput struct {
	raw     []byte
	decoded bool
	ci      claudeInput
	err     error
}

// claude decodes the input as the Claude Code event (readClaude), once.
func (in *hookInput) claude(event string) (claudeInput, error) {
	if !in.decoded {
		in.ci, in.err = readClaude(in.raw, event)
		in.decoded = true
	}
	return in.ci, in.err
}

// userPrompt is the prompt a UserPromptSubmit input carries ("" when it
// does not decode: the hook says why).
func userPrompt(in *hookInput) string {
	ci, err := in.claude(eventUserPromptSubmit)
	if err != nil {
		return ""
	}
	return ci.Prompt
}

// plainPrompt is the prompt hook's input: the prompt itself.
func plainPrompt(in *hookInput) string { return string(in.raw) }

// hookCommand builds a hook subcommand that never fails the host. prompt,
// when set, says what the hook will search for, so that a model in this
// process starts embedding it as the store opens (engram.Options.FirstQuery).
func hookCommand(e *env, use, short string, budget int, run hookRun, prompt func(*hookInput) string) *cobra.Command {
	f := &hookFlags{}
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, a []string) error {
			if len(a) > 0 {
				hookFail(e, fmt.Errorf("%s takes no arguments (input comes on stdin), got %q", use, a))
				return nil
			}
			if err := f.check(); err != nil {
				hookFail(e, err)
				return nil
			}
			f.minRelOn = cmd.Flags().Changed("min-relevance")
			ctx, cancel := context.WithTimeout(cmd.Context(), f.timeout)
			defer cancel()
			raw, err := readInput(ctx, e.stdin)
			if err == nil {
				in := &hookInput{raw: raw}
				if prompt != nil {
					e.firstQuery = prompt(in)
				}
				// A hook that stores the session creates the store; the others
				// read one that exists.
				withStore := e.withStore
				if f.storeEpisode || use == "stop" {
					withStore = e.withNewStore
				}
				err = withStore(ctx, func(db store) error { return run(ctx, e, db, f, in) })
			}
			if err != nil {
				hookFail(e, err)
			}
			return nil
		},
	}
	fl := c.Flags()
	fl.StringArrayVar(&f.scope, "scope", nil, "only memories in scope key=value (repeatable; default $ENGRAM_SCOPE)")
	fl.StringVar(&f.cwdScope, "cwd-scope", "", "also scope KEY=<base name of the working directory>")
	fl.IntVar(&f.budget, "budget", budget, "character budget of the added context")
	fl.IntVar(&f.limit, "limit", 0, "memories at most (0: the default)")
	fl.Float64Var(&f.minRel, "min-relevance", 0, "relevance bar (0–1) for prompt injection (default: the embedding model's)")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Second, "give up (printing nothing) after this long")
	if use != "prompt" {
		fl.BoolVar(&f.storeEpisode, "store-episode", false, "first store the session's turns (its transcript) as an episode")
	}
	return c
}

// readInput reads the hook's stdin, bounded in size and by ctx: a host that
// never closes stdin must not hang the hook.
func readInput(ctx context.Context, r io.Reader) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(r, maxHookInput+1))
		ch <- result{b, err}
	}()
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("reading the hook input: %w", ctx.Err())
	case res := <-ch:
		if res.err != nil {
			return nil, fmt.Errorf("reading the hook input: %w", res.err)
		}
		if len(res.b) > maxHookInput {
			return nil, fmt.Errorf("hook input is longer than %d bytes", maxHookInput)
		}
		return res.b, nil
	}
}

func (f *hookFlags) check() error {
	switch {
	case f.budget < 1:
		return fmt.Errorf("--budget %d: must be at least 1", f.budget)
	case f.limit < 0:
		return fmt.Errorf("--limit %d: must not be negative", f.limit)
	case f.minRel < 0 || f.minRel > 1:
		return fmt.Errorf("--min-relevance %g: want 0 to 1", f.minRel)
	case f.timeout <= 0:
		return fmt.Errorf("--timeout %v: must be positive", f.timeout)
	}
	return nil
}

// filter resolves the hook's scope: flags, else $ENGRAM_SCOPE, plus the
// working directory's base name under --cwd-scope.
func (f *hookFlags) filter(cwd string) (memory.Filter, error) {
	parts := f.scope
	if len(parts) == 0 {
		if env := os.Getenv("ENGRAM_SCOPE"); env != "" {
			parts = []string{env}
		}
	}
	scope, err := memory.ParseScope(parts...)
	if err != nil {
		return memory.Filter{}, fmt.Errorf("scope: %w", err)
	}
	if f.cwdScope != "" {
		if cwd == "" {
			if cwd, err = os.Getwd(); err != nil {
				return memory.Filter{}, fmt.Errorf("--cwd-scope: %w", err)
			}
		}
		base := filepath.Base(filepath.Clean(cwd))
		if base == "." || base == string(filepath.Separator) {
			return memory.Filter{}, fmt.Errorf("%w: --cwd-scope: working directory %q has no base name", engram.ErrInvalid, cwd)
		}
		// The directory's name is one value, whatever it holds: never parsed
		// as k=v,k=v (a directory "b,c=d" is not two keys).
		if old, ok := scope[f.cwdScope]; ok && old != base {
			return memory.Filter{}, fmt.Errorf("%w: --cwd-scope: scope key %q is already %q, the working directory says %q", engram.ErrInvalid, f.cwdScope, old, base)
		}
		add := map[string]string{f.cwdScope: base}
		if err := memory.ValidateScope(add); err != nil {
			return memory.Filter{}, fmt.Errorf("--cwd-scope: working directory %q: %w", base, err)
		}
		if scope == nil {
			scope = map[string]string{}
		}
		scope[f.cwdScope] = base
	}
	return memory.Filter{Scope: scope}, nil
}

// storeSession stores the turns of the session's transcript as the episode
// named by its session id, in the hook's scope, when asked to.
func storeSession(ctx context.Context, db store, f *hookFlags, ci claudeInput) error {
	if !f.storeEpisode {
		return nil
	}
	if ci.SessionID == "" || ci.TranscriptPath == "" {
		return fmt.Errorf("--store-episode: the hook input names no session_id or transcript_path")
	}
	turns, err := readTranscript(ci.TranscriptPath)
	if err != nil || len(turns) == 0 {
		return err
	}
	fl, err := f.filter(ci.Cwd)
	if err != nil {
		return err
	}
	for off := 0; off < len(turns); off += engram.MaxEpisodeMessages { // in calls of at most MaxEpisodeMessages
		chunk := turns[off:min(len(turns), off+engram.MaxEpisodeMessages)]
		_, err := db.AddEpisode(ctx, engram.Episode{Episode: ci.SessionID, Messages: chunk, Scope: fl.Scope, Source: "claude-code",
			FirstSeq: int64(off) + 1})
		if err != nil {
			return fmt.Errorf("--store-episode: %w", err)
		}
	}
	return nil
}

func runStop(ctx context.Context, e *env, db store, f *hookFlags, in *hookInput) error {
	ci, err := in.claude(eventStop)
	if err != nil {
		return err
	}
	f.storeEpisode = true
	return storeSession(ctx, db, f, ci)
}

// claudeInput is the part of Claude Code's hook input the hooks read; other
// fields are ignored.
type claudeInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	Source         string `json:"source"` // SessionStart: startup, resume, clear or compact
	Prompt         string `json:"prompt"` // UserPromptSubmit
}

// claudeOutput is Claude Code's documented JSON output for adding context.
type claudeOutput struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// readClaude decodes a Claude Code hook input for the event.
func readClaude(in []byte, event string) (claudeInput, error) {
	var ci claudeInput
	if err := json.Unmarshal(in, &ci); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return ci, fmt.Errorf("%s hook input is not JSON: %w", event, jsonerr.Describe(err, in))
		}
		return ci, fmt.Errorf("%s hook input is not what Claude Code sends: %w", event, jsonerr.Describe(err, in))
	}
	if ci.HookEventName != "" && ci.HookEventName != event {
		return ci, fmt.Errorf("hook input is for %s, but this is the %s hook", ci.HookEventName, event)
	}
	return ci, nil
}

// writeClaude prints the context in Claude Code's JSON form; nothing when empty.
func writeClaude(w io.Writer, event, context string) error {
	if context == "" {
		return nil
	}
	var out claudeOutput
	out.HookSpecificOutput.HookEventName = event
	out.HookSpecificOutput.AdditionalContext = context
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

func runSessionStart(ctx context.Context, e *env, db store, f *hookFlags, in *hookInput) error {
	ci, err := in.claude(eventSessionStart)
	if err != nil {
		return err
	}
	if err := storeSession(ctx, db, f, ci); err != nil {
		return err
	}
	fl, err := f.filter(ci.Cwd)
	if err != nil {
		return err
	}
	b, err := db.Brief(ctx, engram.BriefOptions{Filter: fl, Budget: f.budget, Limit: f.limit})
	if err != nil {
		return err
	}
	if b.Text == "" {
		return nil
	}
	results := make([]engram.Result, len(b.Items))
	for i, it := range b.Items {
		results[i] = it.Result
	}
	return writeClaude(e.stdout, eventSessionStart, briefHeader+withNote(b.Text, results))
}

func runUserPrompt(ctx context.Context, e *env, db store, f *hookFlags, in *hookInput) error {
	ci, err := in.claude(eventUserPromptSubmit)
	if err != nil {
		return err
	}
	if err := storeSession(ctx, db, f, ci); err != nil {
		return err
	}
	text, err := inject(ctx, db, f, ci.Prompt, ci.Cwd)
	if err != nil || text == "" {
		return err
	}
	return writeClaude(e.stdout, eventUserPromptSubmit, injectHeader+text)
}

func runPlainPrompt(ctx context.Context, e *env, db store, f *hookFlags, in *hookInput) error {
	text, err := inject(ctx, db, f, string(in.raw), "")
	if err != nil || text == "" {
		return err
	}
	_, err = io.WriteString(e.stdout, injectHeader+text)
	return err
}

// inject recalls for a prompt; a blank prompt (a bare command) injects nothing.
func inject(ctx context.Context, db store, f *hookFlags, prompt, cwd string) (string, error) {
	if strings.TrimSpace(prompt) == "" {
		return "", nil
	}
	fl, err := f.filter(cwd)
	if err != nil {
		return "", err
	}
	opt := engram.InjectOptions{Filter: fl, Budget: f.budget, Limit: f.limit}
	if f.minRelOn {
		minRel := f.minRel
		opt.MinRelevance = &minRel
	}
	inj, err := db.Inject(ctx, prompt, opt)
	if err != nil || inj.Text == "" {
		return "", err
	}
	return withNote(inj.Text, inj.Results), nil
}

// hookFail reports a hook's error on stderr, one line, and nothing else.
func hookFail(e *env, err error) {
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("timed out: %w", err)
	}
	fmt.Fprintln(e.stderr, "engram hook: "+format.OneLine(err.Error()))
}
