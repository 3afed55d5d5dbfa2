package format

import (
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
	turns   []memory.Neighbour
}

// turnsText is turns as one line: "Speaker: text / Speaker: text".
func turnsText(turns []memory.Neighbour) string {
	parts := make([]string, len(turns))
	for i, t := range turns {
		parts[i] = turnText(t.Speaker, t.Text)
	}
	return strings.Join(parts, " / ")
}

// turnText is one turn's text after its speaker, if any.
func turnText(speaker, text string) string {
	if speaker == "" {
		return OneLine(text)
	}
	return OneLine(speaker) + ": " + OneLine(text)
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
func runOf(r memory.Result) []memory.Neighbour {
	run := append(slices.Clone(r.Neighbours), memory.Neighbour{ID: r.ID, Seq: r.Seq, Speaker: r.Speaker, Text: r.Text, OccurredAt: r.OccurredAt})
	slices.SortFunc(run, memory.NeighbourOrder)
	return run
}

// meets reports whether two runs of one episode share a turn, or follow
// each other with no turn between (their seqs are consecutive).
func meets(a, b []memory.Neighbour) bool {
	for _, t := range b {
		if slices.ContainsFunc(a, func(u memory.Neighbour) bool { return u.ID == t.ID }) {
			return true
		}
	}
	next := func(x, y []memory.Neighbour) bool {
		last, first := x[len(x)-1].Seq, y[0].Seq
		return last > 0 && first == last+1
	}
	return next(a, b) || next(b, a)
}

// union merges two runs of one episode, each turn once, in episode order.
func union(a, b []memory.Neighbour) []memory.Neighbour {
	out := slices.Clone(a)
	for _, t := range b {
		if !slices.ContainsFunc(a, func(u memory.Neighbour) bool { return u.ID == t.ID }) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, memory.NeighbourOrder)
	return out
}

// EpisodeText is a result with its neighbours as one line of turns, in
// episode order ("Melanie: What kind are they? / Caroline: They're called
// Peruvian Lilies."), or its text (after its speaker) when it has none.
func EpisodeText(r memory.Result) string {
	if len(r.Neighbours) == 0 {
		return turnText(r.Speaker, r.Text)
	}
	return turnsText(runOf(r))
}
