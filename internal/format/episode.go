package format

import (
	"cmp"
	"slices"
	"strings"

	"github.com/engram-memory/engram/memory"
)

// Episode context at delivery. A result that carries its neighbours is shown
// as the run of turns around it, "Melanie: What kind are they? / Caroline:
// They're called Peruvian Lilies. / Melanie: Nice!", so that an answer turn
// comes with the question it answers. Results of one episode whose runs meet
// or overlap are one block, shown once at the place of the best of them.

// block is what one line of a delivery shows: the results it stands for
// (best first) and, when any of them has neighbours, the turns in episode
// order.
type block struct {
	members []int // indexes into the results
	turns   []turn
}

// turn is one memory of an episode as a block shows it.
type turn struct {
	id      string
	seq     int64
	at      int64 // occurred_at, unix nanoseconds
	speaker string
	text    string
}

func compareTurns(a, b turn) int {
	if c := cmp.Compare(a.seq, b.seq); c != 0 {
		return c
	}
	if c := cmp.Compare(a.at, b.at); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// text is the block's turns as one line.
func (b *block) text() string {
	parts := make([]string, len(b.turns))
	for i, t := range b.turns {
		s := OneLine(t.text)
		if t.speaker != "" {
			s = OneLine(t.speaker) + ": " + s
		}
		parts[i] = s
	}
	return strings.Join(parts, " / ")
}

// episodeBlocks groups results into blocks: one per result, except that a
// result whose run of turns meets or overlaps an earlier block's of the same
// episode joins it.
func episodeBlocks(results []memory.Result) []block {
	var blocks []block
	byEpisode := map[string][]int{} // episode key → indexes into blocks
	for i, r := range results {
		if r.Episode == "" || len(r.Neighbours) == 0 {
			blocks = append(blocks, block{members: []int{i}})
			continue
		}
		run := runOf(r)
		key := memory.ScopeJSON(r.Scope) + "\x00" + r.Episode
		joined := false
		for _, bi := range byEpisode[key] {
			if meets(blocks[bi].turns, run) {
				blocks[bi].members = append(blocks[bi].members, i)
				blocks[bi].turns = union(blocks[bi].turns, run)
				joined = true
				break
			}
		}
		if !joined {
			byEpisode[key] = append(byEpisode[key], len(blocks))
			blocks = append(blocks, block{members: []int{i}, turns: run})
		}
	}
	return blocks
}

// runOf is a result's turns: its neighbours and itself, in episode order.
func runOf(r memory.Result) []turn {
	run := make([]turn, 0, len(r.Neighbours)+1)
	for _, n := range r.Neighbours {
		run = append(run, turn{id: n.ID, seq: n.Seq, at: n.OccurredAt.UnixNano(), speaker: n.Speaker, text: n.Text})
	}
	run = append(run, turn{id: r.ID, seq: r.Seq, at: r.OccurredAt.UnixNano(), speaker: r.Speaker, text: r.Text})
	slices.SortFunc(run, compareTurns)
	return run
}

// meets reports whether two runs of one episode share a turn, or follow
// each other with no turn between (their seqs are consecutive).
func meets(a, b []turn) bool {
	ids := make(map[string]bool, len(a))
	for _, t := range a {
		ids[t.id] = true
	}
	for _, t := range b {
		if ids[t.id] {
			return true
		}
	}
	next := func(x, y []turn) bool {
		last, first := x[len(x)-1].seq, y[0].seq
		return last > 0 && first == last+1
	}
	return next(a, b) || next(b, a)
}

// union merges two runs of one episode, each turn once, in episode order.
func union(a, b []turn) []turn {
	out := slices.Clone(a)
	have := make(map[string]int, len(a))
	for i, t := range a {
		have[t.id] = i
	}
	for _, t := range b {
		if _, ok := have[t.id]; !ok {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, compareTurns)
	return out
}

// EpisodeText is a result with its neighbours as one line of turns, in
// episode order ("Melanie: What kind are they? / Caroline: They're called
// Peruvian Lilies."), or its text (after its speaker) when it has none.
func EpisodeText(r memory.Result) string {
	if len(r.Neighbours) == 0 {
		if r.Speaker != "" {
			return OneLine(r.Speaker) + ": " + OneLine(r.Text)
		}
		return OneLine(r.Text)
	}
	b := block{turns: runOf(r)}
	return b.text()
}
