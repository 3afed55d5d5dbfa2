// LLM as reranker: one chat call shows the model the query and every
// numbered document and asks for a JSON list of 0–10 scores. Models wrap
// JSON in code fences and prose, so the answer is searched for the first
// JSON value shaped like a list of {index, score}.

package rerank

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/engram-memory/engram/internal/httpjson"
	"github.com/engram-memory/engram/llm"
)

// maxDocBytes bounds each document in the prompt; a memory's gist is at its
// start, and fifty full documents could overflow a small model's context.
const maxDocBytes = 2000

// maxCandidates bounds how many '[' and '{' positions are tried as the
// start of the answer's JSON.
const maxCandidates = 64

const judgeSystem = `You are a search relevance judge. Given a query and numbered documents, score how well each document answers the query, from 0 (unrelated) to 10 (answers it directly and completely). Judge each document on its own.

Reply with only a JSON array holding one object per document, every index exactly once:
[{"index": 0, "score": 7}, {"index": 1, "score": 2}]`

// LLM scores documents by asking a chat model. It is safe for concurrent use.
type LLM struct {
	c *llm.Client
}

// NewLLM returns a reranker that asks c.
func NewLLM(c *llm.Client) *LLM { return &LLM{c: c} }

// Name returns "llm:" and the model.
func (l *LLM) Name() string {
	if l.c == nil {
		return "llm:"
	}
	return "llm:" + l.c.Model()
}

// Rerank implements Reranker; scores are on the model's 0–10 scale.
func (l *LLM) Rerank(ctx context.Context, query string, docs []string, topN int) ([]Score, error) {
	if len(docs) == 0 {
		return nil, nil
	}
	if l.c == nil {
		return nil, errors.New("rerank: llm: no LLM client configured")
	}
	answer, err := l.c.Complete(ctx, judgeSystem, judgePrompt(query, docs))
	if err != nil {
		return nil, fmt.Errorf("rerank: %s: %w", l.Name(), err)
	}
	scores, err := parseJudgement(answer)
	if err == nil {
		scores, err = order(scores, len(docs), limit(topN, len(docs)))
	}
	if err != nil {
		return nil, fmt.Errorf("rerank: %s: %w", l.Name(), err)
	}
	return scores, nil
}

// judgePrompt lists the query and the documents, each on one line after its
// index, whitespace collapsed and length bounded.
func judgePrompt(query string, docs []string) string {
	var b strings.Builder
	b.WriteString("Query: ")
	b.WriteString(oneLine(query, maxDocBytes))
	b.WriteString("\n\nDocuments:\n")
	for i, d := range docs {
		fmt.Fprintf(&b, "[%d] %s\n", i, oneLine(d, maxDocBytes))
	}
	fmt.Fprintf(&b, "\nScore all %d documents (indexes 0 to %d). JSON array only.", len(docs), len(docs)-1)
	return b.String()
}

// oneLine collapses whitespace runs to single spaces and cuts s to at most
// n bytes on a rune boundary, marking the cut.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// parseJudgement finds the model's scores in its answer: the first JSON
// value, starting at a '[' or '{', that is a list of {index, score} objects
// or an object holding such a list. Reasoning blocks, code fences and prose
// around the JSON are skipped.
func parseJudgement(answer string) ([]Score, error) {
	text := llm.StripReasoning(answer)
	var firstErr error
	tried, cutOff := 0, false
	for i := 0; i < len(text) && tried < maxCandidates; i++ {
		if text[i] != '[' && text[i] != '{' {
			continue
		}
		tried++
		var raw json.RawMessage
		if err := json.NewDecoder(strings.NewReader(text[i:])).Decode(&raw); err != nil {
			cutOff = cutOff || errors.Is(err, io.ErrUnexpectedEOF)
			continue
		}
		scores, shaped, err := judgementScores(raw)
		if err == nil {
			return scores, nil
		}
		if shaped && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	hint := ""
	if cutOff {
		hint = "; its JSON is cut off, so the model may need a larger max tokens"
	}
	return nil, fmt.Errorf("%w: no JSON list of {index, score} in the model's answer (%s)%s", ErrInvalidResponse, httpjson.Preview([]byte(answer)), hint)
}

// judgementScores decodes raw as a list of score objects, or an object with
// one under "scores", "results", "rankings" or "documents". shaped reports
// whether raw looked like an answer at all, so that its error is worth showing.
func judgementScores(raw json.RawMessage) (scores []Score, shaped bool, err error) {
	var items []map[string]json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return nil, false, errors.New("not a list or object")
		}
		found := false
		for _, key := range []string{"scores", "results", "rankings", "documents"} {
			if list, ok := obj[key]; ok && json.Unmarshal(list, &items) == nil {
				found = true
				break
			}
		}
		if !found {
			return nil, false, errors.New("object without a list of scores")
		}
	}
	scores = make([]Score, 0, len(items))
	for i, it := range items {
		idx, err := field(it, "index", "id", "doc")
		if err != nil {
			return nil, len(items) > 0 && i > 0, fmt.Errorf("%w: item %d: %w", ErrInvalidResponse, i, err)
		}
		if idx != math.Trunc(idx) || math.Abs(idx) > 1<<31 {
			return nil, true, fmt.Errorf("%w: item %d: index %v is not a document number", ErrInvalidResponse, i, idx)
		}
		s, err := field(it, "score", "relevance", "relevance_score")
		if err != nil {
			return nil, true, fmt.Errorf("%w: item %d (index %d): %w", ErrInvalidResponse, i, int(idx), err)
		}
		scores = append(scores, Score{Index: int(idx), Score: s})
	}
	return scores, true, nil
}

// field reads the first present key as a number, accepting numeric strings.
func field(item map[string]json.RawMessage, keys ...string) (float64, error) {
	for _, k := range keys {
		raw, ok := item[k]
		if !ok {
			continue
		}
		var f float64
		if json.Unmarshal(raw, &f) == nil {
			return f, nil
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
				return f, nil
			}
		}
		return 0, fmt.Errorf("%q is %s, not a number", k, httpjson.Preview(raw))
	}
	return 0, fmt.Errorf("no %q", keys[0])
}
