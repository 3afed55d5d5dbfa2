// HyDE (Gao et al. 2022, "Precise Zero-Shot Dense Retrieval without
// Relevance Labels"): a query and its answer rarely share wording, so the
// vector leg embeds a short hypothetical memory that would answer the query,
// written by an LLM, in place of the query itself. BM25 keeps the raw query.

package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// hydeSystem asks for the kind of text the store holds: a terse note in
// the voice of a memory, not an essay and not a reply to the user.
const hydeSystem = `You write entries for an AI agent's long-term memory. Given a question or request, write the memory entry that would answer it: one to three plain sentences stating the facts directly, as if already known. Invent plausible specifics where needed. No preamble, no hedging, no lists, no quotation marks, no mention of the question.`

// HyDE asks c for a hypothetical memory (one to three sentences) that would
// answer query, and returns it trimmed, without any reasoning block. An
// empty answer is ErrEmptyCompletion.
func HyDE(ctx context.Context, c *Client, query string) (string, error) {
	if c == nil {
		return "", errors.New("hyde: no LLM client configured")
	}
	q := strings.TrimSpace(query)
	if q == "" {
		return "", errors.New("hyde: empty query")
	}
	out, err := c.Complete(ctx, hydeSystem, "Question: "+q+"\n\nMemory entry:")
	if err != nil {
		return "", fmt.Errorf("hyde: %w", err)
	}
	text := strings.TrimSpace(StripReasoning(out))
	if text == "" {
		return "", fmt.Errorf("hyde: %s: %w", c.Model(), ErrEmptyCompletion)
	}
	return text, nil
}

// StripReasoning removes the <think>…</think> blocks that reasoning models
// (DeepSeek-R1, Qwen3) put before their answer. An unclosed block means the
// answer was cut off while thinking, so nothing after it is kept.
func StripReasoning(s string) string {
	const open, closing = "<think>", "</think>"
	for {
		i := strings.Index(s, open)
		if i < 0 {
			return s
		}
		j := strings.Index(s[i+len(open):], closing)
		if j < 0 {
			return s[:i]
		}
		s = s[:i] + s[i+len(open)+j+len(closing):]
	}
}
