package memory

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Episodes. A memory may belong to an episode — a conversation, a session, a
// task — inside its scope: the episode is named by (ScopeJSON(scope),
// episode), so two scopes' episodes of one name are two episodes. Its
// memories are ordered by EpisodeOrder: seq (a memory without one, seq 0,
// comes first), then occurred_at, then id. A memory's neighbours are the
// memories next to it in that order; the search indexes their words as its
// context, and delivery can show them with it.

// Bounds on the episode fields.
const (
	MaxEpisodeLength = 256
	MaxSpeakerLength = 128
	// MaxSeq is the largest position: 2^53, the last integer every JSON
	// reader (a float64) still reads exactly.
	MaxSeq = 1 << 53
)

// normalizeEpisode trims the speaker and checks the episode fields. An
// episode is a name, refused (never trimmed) with surrounding whitespace, so
// that one text names one episode on every path.
func (m *Memory) normalizeEpisode() error {
	if err := CheckEpisode(m.Episode); err != nil {
		return err
	}
	m.Speaker = strings.TrimSpace(m.Speaker)
	switch {
	case m.Seq < 0 || m.Seq > MaxSeq:
		return fmt.Errorf("%w: field \"seq\": %d is outside 0 to %d", ErrInvalid, m.Seq, int64(MaxSeq))
	case m.Seq != 0 && m.Episode == "":
		return fmt.Errorf("%w: field \"seq\" %d needs an episode (field \"episode\")", ErrInvalid, m.Seq)
	}
	if err := CheckSpeaker(m.Speaker); err != nil {
		return err
	}
	if m.Supersedes != "" {
		if err := CheckID(m.Supersedes); err != nil {
			return fmt.Errorf("field \"supersedes\": %w", err)
		}
		if m.Supersedes == m.ID {
			return fmt.Errorf("%w: memory %s cannot supersede itself", ErrInvalid, m.ID)
		}
	}
	return nil
}

// CheckEpisode refuses an episode name that is too long, has control or
// invalid characters, or begins or ends with whitespace. "" (none) is valid.
func CheckEpisode(e string) error {
	switch {
	case e == "":
		return nil
	case len(e) > MaxEpisodeLength:
		return fmt.Errorf("%w: field \"episode\" of %d bytes is longer than %d", ErrInvalid, len(e), MaxEpisodeLength)
	case strings.TrimSpace(e) != e:
		return fmt.Errorf("%w: field \"episode\" %q begins or ends with whitespace", ErrInvalid, e)
	case !printable(e):
		return fmt.Errorf("%w: field \"episode\" %q has control or invalid characters", ErrInvalid, e)
	}
	return nil
}

// CheckSpeaker refuses a speaker that is too long, has control or invalid
// characters, or begins or ends with whitespace (Normalize trims it first).
func CheckSpeaker(sp string) error {
	switch {
	case len(sp) > MaxSpeakerLength:
		return fmt.Errorf("%w: field \"speaker\" of %d bytes is longer than %d", ErrInvalid, len(sp), MaxSpeakerLength)
	case strings.TrimSpace(sp) != sp:
		return fmt.Errorf("%w: field \"speaker\" %q begins or ends with whitespace", ErrInvalid, sp)
	case !printable(sp):
		return fmt.Errorf("%w: field \"speaker\" %q has control or invalid characters", ErrInvalid, sp)
	}
	return nil
}

// printable reports whether s is valid UTF-8 without control characters.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return false
		}
	}
	return true
}

// EpisodeID is the id a memory given without one gets from its position: the
// episode and the seq joined by a colon ("chat-7:12"), so that ingesting the
// same episode and seq again replaces the memory instead of storing it twice.
// An episode that cannot stand in an id (whitespace, or too long) is
// replaced by a hash of it ("ep-1a2b3c4d5e6f7a8b:12"). It is "" when the memory
// has no episode or no seq.
func EpisodeID(episode string, seq int64) string {
	if episode == "" || seq <= 0 {
		return ""
	}
	suffix := ":" + strconv.FormatInt(seq, 10)
	if len(episode)+len(suffix) <= MaxIDLength && CheckID(episode) == nil {
		return episode + suffix
	}
	return "ep-" + ContentHash(episode)[:16] + suffix
}

// EpisodeKey names an episode store-wide: the scope's canonical text, a NUL
// and the episode. It is "" for a memory in no episode.
func (m *Memory) EpisodeKey() string {
	if m.Episode == "" {
		return ""
	}
	return ScopeJSON(m.Scope) + "\x00" + m.Episode
}

// EpisodeOrder orders the memories of one episode: by seq, then occurred_at,
// then id.
func EpisodeOrder(a, b *Memory) int {
	return episodeOrder(a.Seq, a.OccurredAt, a.ID, b.Seq, b.OccurredAt, b.ID)
}

// NeighbourOrder is EpisodeOrder for neighbours (and results made
// neighbours, NeighbourOf).
func NeighbourOrder(a, b Neighbour) int {
	return episodeOrder(a.Seq, a.OccurredAt, a.ID, b.Seq, b.OccurredAt, b.ID)
}

func episodeOrder(seqA int64, atA time.Time, idA string, seqB int64, atB time.Time, idB string) int {
	if c := cmp.Compare(seqA, seqB); c != 0 {
		return c
	}
	if c := atA.Compare(atB); c != 0 {
		return c
	}
	return cmp.Compare(idA, idB)
}

// Current reports whether the memory was the current truth at asOf (nil: now,
// whatever its time): it had occurred by then (with asOf), and no memory
// superseding it had.
func (m *Memory) Current(asOf *time.Time) bool {
	if asOf == nil {
		return m.Superseded == nil
	}
	if m.OccurredAt.After(*asOf) {
		return false
	}
	return m.Superseded == nil || m.Superseded.At.After(*asOf)
}

// SupersessionOf is the supersession of the memory with id in scope among
// cands: the candidate of exactly that scope naming id in Supersedes that
// occurred first (then the smallest id), the memory itself left out; nil
// when none does. Every backend derives Memory.Superseded by this rule.
func SupersessionOf(id string, scope map[string]string, cands []*Memory) *Supersession {
	sj := ScopeJSON(scope)
	var best *Memory
	for _, c := range cands {
		if c == nil || c.Supersedes != id || c.ID == id || ScopeJSON(c.Scope) != sj {
			continue
		}
		if best == nil || c.OccurredAt.Before(best.OccurredAt) || (c.OccurredAt.Equal(best.OccurredAt) && c.ID < best.ID) {
			best = c
		}
	}
	if best == nil {
		return nil
	}
	return &Supersession{By: best.ID, At: best.OccurredAt}
}
