package eval

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/engram-memory/engram/internal/recall"
)

// PadQuestions turns every question of ds into a long prompt of about size
// bytes, as a host hook hands over a prompt with a conversation pasted into
// it: the question comes last (first with questionFirst), after turns of
// another corpus's conversation, one a line, whole turns only. The turns
// are those of the next corpus (the last corpus takes the first's), so the
// padding is about something the store does not hold, as in a prompt whose
// pasted text is not the question, and never holds the answer. Each
// question starts its padding at another turn (its place in the corpus
// times 7), so the questions of one corpus are padded differently. The
// result is deterministic. It needs at least two corpora.
func PadQuestions(ds *Dataset, size int, questionFirst bool) error {
	if len(ds.Corpora) < 2 {
		return fmt.Errorf("padding questions: %d corpora, want at least 2 (the padding is another corpus's text)", len(ds.Corpora))
	}
	if size <= 0 {
		return fmt.Errorf("padding questions: size %d bytes, want more than 0", size)
	}
	for i := range ds.Corpora {
		from := ds.Corpora[(i+1)%len(ds.Corpora)].Docs
		var lines []string
		for _, d := range from {
			if t := strings.TrimSpace(strings.ReplaceAll(d.Text, "\n", " ")); t != "" {
				if d.Speaker != "" {
					t = d.Speaker + ": " + t
				}
				lines = append(lines, t)
			}
		}
		if len(lines) == 0 {
			return fmt.Errorf("padding questions: corpus %s has no text to pad with", ds.Corpora[(i+1)%len(ds.Corpora)].Name)
		}
		cases := ds.Corpora[i].Cases
		for j := range cases {
			cases[j].Text = padQuestion(cases[j].Text, lines, j*7, size, questionFirst)
		}
	}
	return nil
}

// padQuestion is q with whole lines from start on (wrapping around) before
// it, or after it with first, as many as keep the prompt within size bytes,
// and at least one.
func padQuestion(q string, lines []string, start, size int, first bool) string {
	budget := size - len(q) - 2
	var pad strings.Builder
	for k := 0; k < 1<<20; k++ {
		l := lines[(start+k)%len(lines)]
		if k > 0 && pad.Len()+len(l)+1 > budget {
			break
		}
		pad.WriteString(l)
		pad.WriteByte('\n')
	}
	if first {
		return q + "\n\n" + pad.String()
	}
	return pad.String() + "\n" + q
}

// LongQuery is a setting of recall's long-query reduction, as the mode
// parameter long=BYTES/TERMS/WINDOW[/ends][/wt] gives it: a query over BYTES
// keeps TERMS keyword terms and its vector leg reads WINDOW bytes, its head
// (or, with ends, its head and tail halves; with wt the window's own terms
// are kept first).
type LongQuery struct {
	Bytes, Terms, Window int
	Ends, WindowTerms    bool
}

// DefaultLongQuery is recall's setting as this process started with it.
var DefaultLongQuery = LongQuery{recall.LongQueryBytes, recall.MaxQueryTerms, recall.QueryWindowBytes, recall.QueryWindowEnds, recall.WindowTermsFirst}

// set makes l recall's setting for the searches that follow.
func (l LongQuery) set() {
	recall.LongQueryBytes, recall.MaxQueryTerms, recall.QueryWindowBytes = l.Bytes, l.Terms, l.Window
	recall.QueryWindowEnds, recall.WindowTermsFirst = l.Ends, l.WindowTerms
}

// ParseLongQuery parses BYTES/TERMS/WINDOW[/ends][/wt].
func ParseLongQuery(v string) (LongQuery, error) {
	parts := strings.Split(v, "/")
	bad := fmt.Errorf("long=%q: want BYTES/TERMS/WINDOW, each a whole number above 0, then /ends or /wt if wanted (recall's is %d/%d/%d)",
		v, DefaultLongQuery.Bytes, DefaultLongQuery.Terms, DefaultLongQuery.Window)
	if len(parts) < 3 {
		return LongQuery{}, bad
	}
	var n [3]int
	for i := range n {
		x, err := strconv.Atoi(parts[i])
		if err != nil || x < 1 {
			return LongQuery{}, bad
		}
		n[i] = x
	}
	l := LongQuery{Bytes: n[0], Terms: n[1], Window: n[2]}
	for _, p := range parts[3:] {
		switch {
		case p == "ends" && !l.Ends:
			l.Ends = true
		case p == "wt" && !l.WindowTerms:
			l.WindowTerms = true
		default:
			return LongQuery{}, bad
		}
	}
	return l, nil
}
