package recall

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/internal/tokenize"
	"github.com/engram-memory/engram/memory"
)

// Long queries. A prompt pasted whole (a log, a file, a transcript) must not
// hold a search past its deadline: a query longer than LongQueryBytes is
// reduced, deterministically, before any leg runs. Its window is its first
// and last QueryWindowBytes/2 bytes, where a question typed before or after
// a pasted text is: the vector leg, date reading, HyDE and rerank read it.
// Its keyword terms are counted once (repeats merged) and MaxQueryTerms of
// them kept for the BM25 leg: the window's first, then the most
// discriminative of the rest. The work is linear in the query's length (one
// tokenization and one count) and bounded after it. The response says what
// was cut (Response.Reduced and a degraded entry of stage "query"). A query
// at most LongQueryBytes long runs whole, as before.
//
// These are variables only so that engram eval can measure other settings
// (its mode parameter long=); nothing else sets them. docs/evaluation.md
// has the sweep that chose them: with the first 512 bytes alone and the 64
// most discriminative terms, LoCoMo questions padded to 8 KB with pasted
// conversation were answered almost never.
var (
	// LongQueryBytes is the longest query that runs whole.
	LongQueryBytes = 4096
	// MaxQueryTerms is the distinct keyword terms a reduced query keeps.
	MaxQueryTerms = 64
	// QueryWindowBytes is the size of a reduced query's window: within one
	// window of the built-in model (256 word pieces) for English text.
	QueryWindowBytes = 512
	// QueryWindowEnds makes the window the query's start and end; false:
	// its first QueryWindowBytes (as before the sweep).
	QueryWindowEnds = true
	// WindowTermsFirst keeps the window's keyword terms before any other
	// (up to MaxQueryTerms); false: the most discriminative of all.
	WindowTermsFirst = true
)

const (
	// TermSampleBytes bounds the text a reduced query's terms are counted
	// in: a longer query is sampled in TermSampleChunks pieces spread evenly
	// over it, whole words each, so that tokenizing (stemming every distinct
	// word) costs the same for 300 KB as for 5 MB.
	TermSampleBytes  = 256 << 10
	TermSampleChunks = 64
)

// VectorText is the text of a (validated, trimmed) query that the vector
// leg embeds: the query, or a long one's window.
func VectorText(query string) string {
	if len(query) <= LongQueryBytes {
		return query
	}
	if QueryWindowEnds {
		return ends(query, QueryWindowBytes)
	}
	return head(query, QueryWindowBytes)
}

// defaultTok tokenizes a long query for a backend that cannot
// (backend.QueryTermer).
var defaultTok = tokenize.New(tokenize.DefaultOptions())

// reduce cuts a long query to bounded work: r.window becomes its window
// and r.terms its kept keyword terms. A short query is left as it is.
func (r *run) reduce(ctx context.Context) error {
	r.window = r.q.Query
	if len(r.q.Query) <= LongQueryBytes {
		return nil
	}
	red := &memory.Reduced{Bytes: len(r.q.Query)}
	r.window = VectorText(r.q.Query)
	red.Window = len(r.window)
	var (
		counts []backend.TermCount
		n      int
		err    error
	)
	text := sample(r.q.Query, TermSampleBytes, TermSampleChunks)
	red.Sampled = len(text)
	if WindowTermsFirst && len(text) < len(r.q.Query) {
		text += "\n" + r.window // the window's terms are counted, so they can be kept
	}
	if qt, ok := r.s.Backend.(backend.QueryTermer); ok {
		counts, n, err = qt.QueryTerms(ctx, text, r.q.Filter.Scope)
		if err != nil {
			return fmt.Errorf("reducing a long query: %w", err)
		}
	} else {
		counts = backend.CountTerms(defaultTok.Tokens(text))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, c := range counts {
		red.Terms += c.Count
	}
	red.Distinct = len(counts)
	var first map[string]bool
	if WindowTermsFirst {
		var wc []backend.TermCount
		if qt, ok := r.s.Backend.(backend.QueryTermer); ok {
			if wc, _, err = qt.QueryTerms(ctx, r.window, r.q.Filter.Scope); err != nil {
				return fmt.Errorf("reducing a long query: %w", err)
			}
		} else {
			wc = backend.CountTerms(defaultTok.Tokens(r.window))
		}
		first = make(map[string]bool, len(wc))
		for _, c := range wc {
			first[c.Term] = true
		}
	}
	red.Kept = keepTerms(counts, n, MaxQueryTerms, first)
	r.terms = red.Kept
	r.resp.Reduced = red
	in := ""
	if red.Sampled < len(r.q.Query) {
		in = fmt.Sprintf(" in a sample of %d bytes spread over it", red.Sampled)
	}
	window := fmt.Sprintf("its first %d bytes", red.Window)
	if QueryWindowEnds {
		window = fmt.Sprintf("%d bytes of its start and end", red.Window)
	}
	r.degrade("query", fmt.Errorf("long query (%d bytes, over %d): the BM25 leg searched the %d most discriminative of its %d distinct terms%s (%d with repeats); the vector leg, dates, HyDE and rerank read %s",
		red.Bytes, LongQueryBytes, len(red.Kept), red.Distinct, in, red.Terms, window))
	return nil
}

// keepTerms picks at most limit of a query's distinct terms (counts, in
// order of first appearance, over a collection of n memories; n 0 when the
// backend gave no document frequencies) and returns them in that order.
//
// A term the collection holds is ranked by (1 + ln count)·idf, idf BM25's
// ln(1 + (n − df + 0.5)/(df + 0.5)): frequent in the query and rare in the
// store. Terms the collection lacks cannot rank a memory but do lower the
// keyword relevance signal (they stay in its bound), so they keep a share of
// the limit equal to their share of the query's occurrences, the most
// frequent first: a prompt mostly about something the store lacks stays
// weakly relevant. Ties go to the term that appears first.
//
// The terms in first (the window's, with WindowTermsFirst) are kept before
// any other, in order of first appearance, up to limit; the rest of the
// limit goes to the others as above.
func keepTerms(counts []backend.TermCount, n, limit int, first map[string]bool) []string {
	type ranked struct {
		at    int
		score float64
	}
	var present, absent []ranked
	var at []int
	total, absentOcc := 0, 0
	for i, c := range counts {
		if first[c.Term] && len(at) < limit {
			at = append(at, i)
			continue
		}
		total += c.Count
		boost := 1 + math.Log(float64(c.Count))
		switch {
		case c.DF < 0 || n == 0: // unknown: the query's own counts decide
			present = append(present, ranked{i, boost})
		case c.DF == 0:
			absent = append(absent, ranked{i, float64(c.Count)})
			absentOcc += c.Count
		default:
			df := float64(c.DF)
			present = append(present, ranked{i, boost * math.Log(1+(float64(n)-df+0.5)/(df+0.5))})
		}
	}
	byScore := func(a, b ranked) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.at, b.at)
	}
	slices.SortFunc(present, byScore)
	slices.SortFunc(absent, byScore)
	limit -= len(at)
	nAbsent := 0
	if total > 0 {
		nAbsent = min(len(absent), int(math.Round(float64(limit)*float64(absentOcc)/float64(total))))
	}
	nPresent := min(len(present), limit-nAbsent)
	if nPresent < limit-nAbsent { // too few present terms: the rest go to absent ones
		nAbsent = min(len(absent), limit-nPresent)
	}
	for _, p := range present[:nPresent] {
		at = append(at, p.at)
	}
	for _, a := range absent[:nAbsent] {
		at = append(at, a.at)
	}
	slices.Sort(at)
	out := make([]string, len(at))
	for i, j := range at {
		out[i] = counts[j].Term
	}
	return out
}

// head is text's first at most max bytes, cut at a rune boundary and, when a
// space falls in its second half, before the last space: whole words.
func head(text string, max int) string {
	if len(text) <= max {
		return text
	}
	end := max
	for end > 0 && !utf8.RuneStart(text[end]) {
		end--
	}
	cut := text[:end]
	if i := strings.LastIndexFunc(cut, unicode.IsSpace); i > max/2 {
		cut = cut[:i]
	}
	return strings.TrimSpace(cut)
}

// ends is text's head of at most max/2 bytes and its tail of at most the
// rest less one byte (whole words, at rune boundaries) joined by a newline:
// at most max bytes; text itself when that long at most.
func ends(text string, max int) string {
	if len(text) <= max {
		return text
	}
	first := head(text, max/2)
	size := max - len(first) - 1
	start := len(text) - size
	for start < len(text) && !utf8.RuneStart(text[start]) {
		start++
	}
	tail := text[start:]
	if i := strings.IndexFunc(tail, unicode.IsSpace); i >= 0 && i <= size/2 { // from the first whole word
		tail = tail[i:]
	}
	return first + "\n" + strings.TrimSpace(tail)
}

// sample is text when at most max bytes long, else chunks pieces of it, each
// about max/chunks bytes of whole words, the first at its start and the rest
// spread evenly after, joined by newlines.
func sample(text string, max, chunks int) string {
	if len(text) <= max {
		return text
	}
	size, step := max/chunks, len(text)/chunks
	var b strings.Builder
	b.Grow(max + chunks)
	for i := range chunks {
		start := i * step
		if i > 0 { // from the next word on
			if j := strings.IndexFunc(text[start:min(len(text), start+size)], unicode.IsSpace); j >= 0 {
				start += j
			}
			for start < len(text) && !utf8.RuneStart(text[start]) {
				start++
			}
		}
		piece := head(text[start:], size)
		if piece == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(piece)
	}
	return b.String()
}
