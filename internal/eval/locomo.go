package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/datephrase"
	"github.com/engram-memory/engram/memory"
)

// LoCoMo retrieval units.
const (
	LevelTurn    = "turn"
	LevelSession = "session"
)

// LoCoMoMetrics are the columns LoCoMo retrieval is reported with: "any" (a gold
// unit in the top k) and "fraction" (recall@k) forms side by side.
var LoCoMoMetrics = []string{Any5, Any10, Recall5, Recall10, Hit1, NDCG5, MRR}

// LoCoMoCategories names LoCoMo's question categories.
var LoCoMoCategories = map[int]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

// locomoDateLayout parses session dates such as "1:56 pm on 8 May, 2023".
const locomoDateLayout = "3:04 pm on 2 January, 2006"

// LoCoMoOptions chooses how conversations become memories.
type LoCoMoOptions struct {
	// Level is the retrieval unit: LevelTurn (default) or LevelSession.
	Level string
	// WithDate puts the session's date and time in each unit's Description.
	WithDate bool
	// WithSpeaker prefixes each turn with its speaker ("Caroline: ...").
	WithSpeaker bool
	// WithCaptions appends a shared image's caption to its turn ("[photo: ...]").
	WithCaptions bool
	// Neighbours adds the text of up to this many previous and next turns of the
	// same session to a turn's Description as context (turn level only).
	Neighbours int
	// Episodes stores each session as an episode: a turn's memory carries
	// the session as its Episode, its place as Seq, its speaker as Speaker
	// and the session's date as OccurredAt (the store's own fields, which
	// its index and date reading use), and its text is the turn's alone. At
	// session level each session carries its date and the conversation as
	// its episode.
	Episodes bool
	// Conversations keeps only the first N conversations (after Skip); 0
	// keeps all.
	Conversations int
	// Skip drops the first N conversations: with Conversations, a held-out
	// part of the file (a bar chosen on the first N, checked on the rest).
	Skip int
}

// ErrSkippedAll is ReadLoCoMo's error when Skip leaves no conversation.
var ErrSkippedAll = errors.New("locomo: no conversation left")

// DefaultLoCoMoOptions is how an agent stores a conversation: one turn a
// memory, each session an episode with its turns' speakers and date.
func DefaultLoCoMoOptions() LoCoMoOptions {
	return LoCoMoOptions{Level: LevelTurn, Episodes: true}
}

// PlainLoCoMoOptions is the plain published setup: one turn a unit, written
// "speaker: text", nothing else added.
func PlainLoCoMoOptions() LoCoMoOptions {
	return LoCoMoOptions{Level: LevelTurn, WithSpeaker: true}
}

// LoadLoCoMo loads a LoCoMo JSON file: each conversation becomes one Corpus (its
// turns or sessions are the memories, its questions the cases). Gold is the
// evidence turns, or at session level the sessions that hold them. Evidence ids
// are repaired where the fault is plain ("D8:6; D9:17" split, "D:11:26" read as
// "D11:26"); ids matching no turn are dropped, and a question left with no
// evidence is skipped and counted.
func LoadLoCoMo(path string, opt LoCoMoOptions) (*Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open locomo: %w", err)
	}
	defer f.Close()
	ds, err := ReadLoCoMo(f, opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return ds, nil
}

type locomoSample struct {
	SampleID     string                     `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []locomoQA                 `json:"qa"`
}

type locomoQA struct {
	Question string   `json:"question"`
	Evidence []string `json:"evidence"`
	Category int      `json:"category"`
}

type locomoTurn struct {
	Speaker string `json:"speaker"`
	DiaID   string `json:"dia_id"`
	Text    string `json:"text"`
	Caption string `json:"blip_caption"`
}

type locomoSession struct {
	n     int
	key   string
	date  string
	when  time.Time
	turns []locomoTurn
}

// loadStats counts what loading dropped or repaired, for the notes.
type loadStats struct {
	emptyEvidence, noValidEvidence, droppedIDs, repairedIDs, dupTurns, emptyTurns, badDates int
}

// ReadLoCoMo is LoadLoCoMo over an already open file.
func ReadLoCoMo(r io.Reader, opt LoCoMoOptions) (*Dataset, error) {
	if opt.Level == "" {
		opt.Level = LevelTurn
	}
	if opt.Level != LevelTurn && opt.Level != LevelSession {
		return nil, fmt.Errorf("locomo level %q: want %q or %q", opt.Level, LevelTurn, LevelSession)
	}
	if opt.Neighbours < 0 || opt.Conversations < 0 || opt.Skip < 0 {
		return nil, fmt.Errorf("locomo options: neighbours (%d), conversations (%d) and skip (%d) must not be negative", opt.Neighbours, opt.Conversations, opt.Skip)
	}
	var samples []locomoSample
	if err := json.NewDecoder(r).Decode(&samples); err != nil {
		return nil, fmt.Errorf("decode locomo: %w", err)
	}
	if opt.Skip > 0 && opt.Skip >= len(samples) {
		return nil, fmt.Errorf("%w: skipping %d leaves none of the file's %d", ErrSkippedAll, opt.Skip, len(samples))
	}
	skip := opt.Skip
	samples = samples[skip:]
	if opt.Conversations > 0 && len(samples) > opt.Conversations {
		samples = samples[:opt.Conversations]
	}
	ds := &Dataset{Name: "locomo-" + opt.Level, Metrics: LoCoMoMetrics, Categories: LoCoMoCategories}
	var st loadStats
	for i, s := range samples {
		name := s.SampleID
		if name == "" {
			name = "conversation-" + strconv.Itoa(skip+i+1)
		}
		sessions, err := parseSessions(s.Conversation, &st)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		c := Corpus{Name: name}
		sessionOf := map[string]string{} // dia_id → session key
		for _, ss := range sessions {
			for _, t := range ss.turns {
				sessionOf[t.DiaID] = ss.key
			}
		}
		if opt.Level == LevelTurn {
			c.Docs = turnDocs(name, sessions, opt)
		} else {
			c.Docs = sessionDocs(name, sessions, opt)
		}
		for qi, qa := range s.QA {
			gold := locomoGold(qa.Evidence, sessionOf, opt.Level, &st)
			if len(gold) == 0 {
				ds.Skipped++
				continue
			}
			text := strings.TrimSpace(qa.Question)
			c.Cases = append(c.Cases, Case{
				ID:       fmt.Sprintf("%s/q%d", name, qi+1),
				Text:     text,
				Gold:     gold,
				Category: qa.Category,
				Groups:   []string{dateGroup(text)},
			})
		}
		ds.Corpora = append(ds.Corpora, c)
	}
	ds.Notes = st.notes()
	return ds, nil
}

// parseSessions pulls "session_N" turn lists and their "session_N_date_time"
// out of a conversation object, in session order.
func parseSessions(conv map[string]json.RawMessage, st *loadStats) ([]locomoSession, error) {
	var out []locomoSession
	seen := map[string]bool{}
	for key, raw := range conv {
		num, ok := strings.CutPrefix(key, "session_")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(num)
		if err != nil || n < 0 {
			continue // session_N_date_time and anything else
		}
		var turns []locomoTurn
		if err := json.Unmarshal(raw, &turns); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		ss := locomoSession{n: n, key: key}
		if d, ok := conv[key+"_date_time"]; ok {
			if err := json.Unmarshal(d, &ss.date); err != nil {
				return nil, fmt.Errorf("%s_date_time: %w", key, err)
			}
			ss.date = strings.TrimSpace(ss.date)
			if t, err := time.Parse(locomoDateLayout, ss.date); err == nil {
				ss.when = t
			} else {
				st.badDates++
			}
		}
		for _, t := range turns {
			t.DiaID, t.Speaker = strings.TrimSpace(t.DiaID), strings.TrimSpace(t.Speaker)
			t.Text, t.Caption = strings.TrimSpace(t.Text), strings.TrimSpace(t.Caption)
			switch {
			case t.DiaID == "" || (t.Text == "" && t.Caption == ""):
				st.emptyTurns++
			case seen[t.DiaID]:
				st.dupTurns++
			default:
				seen[t.DiaID] = true
				ss.turns = append(ss.turns, t)
			}
		}
		if len(ss.turns) > 0 {
			out = append(out, ss)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].n < out[j].n })
	return out, nil
}

// The question groups a LoCoMo report breaks its results down by, besides
// the categories.
const (
	GroupDate   = "with a date"
	GroupNoDate = "without"
)

// dateGroup says whether a question names a date of its own ("on 9 February,
// 2023", "in May 2023"): a phrase the date reader reads without a reference
// time.
func dateGroup(q string) string {
	for _, w := range datephrase.Find(q, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)) {
		if !w.Relative {
			return GroupDate
		}
	}
	return GroupNoDate
}

// turnLine renders one turn as stored text.
func turnLine(t locomoTurn, opt LoCoMoOptions) string {
	s := t.Text
	if opt.WithCaptions && t.Caption != "" {
		s = strings.TrimSpace(s + " [photo: " + t.Caption + "]")
	}
	if s == "" {
		s = "[photo]"
	}
	if opt.WithSpeaker && t.Speaker != "" {
		s = t.Speaker + ": " + s
	}
	return s
}

func turnDocs(conv string, sessions []locomoSession, opt LoCoMoOptions) []*memory.Memory {
	var docs []*memory.Memory
	for _, ss := range sessions {
		for i, t := range ss.turns {
			var ctx []string
			if opt.WithDate && ss.date != "" {
				ctx = append(ctx, ss.date)
			}
			if opt.Neighbours > 0 {
				for j := max(0, i-opt.Neighbours); j < min(len(ss.turns), i+opt.Neighbours+1); j++ {
					if j != i {
						ctx = append(ctx, turnLine(ss.turns[j], opt))
					}
				}
			}
			m := &memory.Memory{
				ID: t.DiaID, Text: turnLine(t, opt), Description: strings.Join(ctx, " | "),
				Type: "turn", Scene: ss.key, Source: conv,
			}
			switch {
			case opt.Episodes:
				// Stored now, said then: as an agent stores a conversation.
				m.Episode, m.Seq, m.Speaker, m.OccurredAt = ss.key, int64(i+1), t.Speaker, ss.when
			case !ss.when.IsZero():
				m.CreatedAt = ss.when.Add(time.Duration(i) * time.Second)
			}
			docs = append(docs, m)
		}
	}
	return docs
}

func sessionDocs(conv string, sessions []locomoSession, opt LoCoMoOptions) []*memory.Memory {
	docs := make([]*memory.Memory, 0, len(sessions))
	for _, ss := range sessions {
		lines := make([]string, len(ss.turns))
		lo := opt
		lo.WithSpeaker = opt.WithSpeaker || opt.Episodes // a session's turns are told apart by their speakers
		for i, t := range ss.turns {
			lines[i] = turnLine(t, lo)
		}
		m := &memory.Memory{ID: ss.key, Text: strings.Join(lines, "\n"), Type: "session", Source: conv}
		if opt.WithDate {
			m.Description = ss.date
		}
		if opt.Episodes {
			m.OccurredAt = ss.when // stored now, said then; a session has no neighbours of its own
		} else {
			m.CreatedAt = ss.when
		}
		docs = append(docs, m)
	}
	return docs
}

var (
	evidenceSplit = regexp.MustCompile(`[;,\s]+`)
	evidenceColon = regexp.MustCompile(`^D:(\d+):(\d+)$`)
)

// locomoGold turns a question's evidence into gold units (grade 1).
func locomoGold(evidence []string, sessionOf map[string]string, level string, st *loadStats) map[string]int {
	gold := map[string]int{}
	named, dropped := false, 0
	for _, e := range evidence {
		parts := evidenceSplit.Split(strings.TrimSpace(e), -1)
		if len(parts) > 1 {
			st.repairedIDs++
		}
		for _, id := range parts {
			if id == "" {
				continue
			}
			named = true
			if m := evidenceColon.FindStringSubmatch(id); m != nil {
				id = "D" + m[1] + ":" + m[2]
				st.repairedIDs++
			}
			sess, ok := sessionOf[id]
			if !ok {
				dropped++
				continue
			}
			if level == LevelSession {
				gold[sess] = 1
			} else {
				gold[id] = 1
			}
		}
	}
	if len(gold) == 0 {
		if named {
			st.noValidEvidence++
		} else {
			st.emptyEvidence++
		}
		return nil
	}
	st.droppedIDs += dropped
	return gold
}

func (st *loadStats) notes() []string {
	var n []string
	add := func(count int, format string) {
		if count > 0 {
			n = append(n, fmt.Sprintf(format, count))
		}
	}
	add(st.emptyEvidence, "%d questions skipped: empty evidence")
	add(st.noValidEvidence, "%d questions skipped: no evidence id matches a turn")
	add(st.droppedIDs, "%d evidence ids matching no turn dropped from questions that keep other evidence")
	add(st.repairedIDs, "%d malformed evidence entries repaired (\"D8:6; D9:17\" split, \"D:11:26\" read as \"D11:26\")")
	add(st.dupTurns, "%d turns with a repeated dia_id ignored")
	add(st.emptyTurns, "%d turns with no dia_id or no text ignored")
	add(st.badDates, "%d session dates not understood (left without a time)")
	return n
}
