package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/engram-memory/engram/memory"
)

// Reading rows that may be damaged (hand edits, another tool, a counter an
// older build let overflow): a read never fails on one row. A row whose
// identity or visibility cannot be trusted (id, scope, times) is skipped; one
// with a damaged part (tags, metadata, vector, counters) is read without that
// part, or with the nearest valid counters. Either way the row is reported,
// so that stats and doctor can say what is wrong and where.

// BadRow is a row Scan or a lookup could not read as it is.
type BadRow struct {
	ID    string `json:"id"`
	Scope string `json:"scope"` // the scope column as stored
	// Problem says what is wrong with it.
	Problem string `json:"problem"`
	// Skipped: the row is left out (not searchable, not exported). Otherwise
	// it is read without the damaged part, as Problem says.
	Skipped bool `json:"skipped"`
}

// Key is the bad row's key as the index would name it.
func (b BadRow) Key() string { return b.ID + "\x00" + b.Scope }

func (b BadRow) String() string {
	what := "read without it"
	if b.Skipped {
		what = "skipped"
	}
	return fmt.Sprintf("memory %q scope %s: %s (%s)", b.ID, b.Scope, b.Problem, what)
}

type scanner interface{ Scan(dest ...any) error }

// readOne reads the row of memoryColumns one query selects, inside tx: m nil
// and bad nil when there is none. (A *sql.Row scans once only, which the
// loose second reading of a damaged row needs, so this iterates *sql.Rows.)
func readOne(ctx context.Context, tx *sql.Tx, query string, args ...any) (*memory.Memory, *BadRow, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, nil, rows.Err()
	}
	return decodeRow(rows)
}

// decodeRow reads the current row of r, whose columns are memoryColumns. It
// returns the memory (nil when the row is skipped) and, when anything was
// wrong, the report. err is only for a failure of the query itself.
func decodeRow(r scanner) (*memory.Memory, *BadRow, error) {
	var (
		m                     memory.Memory
		scope, tags, metadata string
		fav                   int
		created, updated      int64
		demandAt              sql.NullInt64
		model                 sql.NullString
		dim                   sql.NullInt64
		blob                  []byte
		occurred              sql.NullInt64
	)
	err := r.Scan(&m.ID, &m.Name, &m.Description, &m.Text, &m.Type, &m.Scene, &scope, &tags, &m.Source,
		&metadata, &fav, &created, &updated, &m.Uses, &m.Demand, &demandAt, &m.ContentHash, &model, &dim, &blob,
		&m.Episode, &m.Seq, &m.Speaker, &occurred, &m.Supersedes)
	if err != nil {
		// A value of an unexpected type: read every column as it is.
		return decodeLoose(r)
	}
	return finish(&m, scope, tags, metadata, fav, created, updated, demandAt, occurred, model, dim, blob, nil)
}

// finish checks and converts what both decoders read.
func finish(m *memory.Memory, scope, tags, metadata string, fav int, created, updated int64, demandAt, occurred sql.NullInt64,
	model sql.NullString, dim sql.NullInt64, blob []byte, problems []string) (*memory.Memory, *BadRow, error) {
	note := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	skip := func(format string, a ...any) (*memory.Memory, *BadRow, error) {
		note(format, a...)
		return nil, &BadRow{ID: m.ID, Scope: scope, Problem: strings.Join(problems, "; "), Skipped: true}, nil
	}
	if err := memory.CheckID(m.ID); err != nil {
		return skip("%v", err)
	}
	sc, err := parseScope(scope)
	if err != nil {
		return skip("scope is not a JSON object of strings: %v", err)
	}
	if c := memory.ScopeJSON(sc); c != scope {
		return skip("scope is not in canonical form (want %s)", c)
	}
	if err := memory.CheckStoredScope(sc); err != nil {
		return skip("%v", err)
	}
	if len(sc) > 0 {
		m.Scope = sc
	}
	if strings.TrimSpace(m.Text) == "" {
		// A memory without text can be neither searched nor imported back.
		return skip("empty text")
	}
	if err := json.Unmarshal([]byte(tags), &m.Tags); err != nil {
		m.Tags = nil
		note("tags are not a JSON array of strings, read as none")
	}
	if len(m.Tags) == 0 {
		m.Tags = nil
	}
	if strings.TrimSpace(metadata) != "" {
		if json.Valid([]byte(metadata)) && strings.TrimSpace(metadata)[0] == '{' {
			m.Metadata = json.RawMessage(metadata)
		} else {
			note("metadata is not a JSON object, read as none")
		}
	}
	m.Favorite = fav != 0
	m.CreatedAt = inRange(time.Unix(0, created).UTC(), "created_at", note)
	m.UpdatedAt = inRange(time.Unix(0, updated).UTC(), "updated_at", note)
	if demandAt.Valid {
		t := inRange(time.Unix(0, demandAt.Int64).UTC(), "demand_at", note)
		m.DemandAt = &t
	}
	m.OccurredAt = m.CreatedAt
	if occurred.Valid {
		m.OccurredAt = inRange(time.Unix(0, occurred.Int64).UTC(), "occurred_at", note)
	}
	finishEpisode(m, note)
	if u := memory.ClampUses(m.Uses); u != m.Uses {
		note("uses %d out of range, read as %d", m.Uses, u)
		m.Uses = u
	}
	if d := memory.ClampDemand(m.Demand); d != m.Demand {
		note("demand %v out of range, read as %v", m.Demand, d)
		m.Demand = d
	}
	if model.Valid && blob != nil {
		v, err := DecodeVector(blob)
		switch {
		case err != nil:
			note("embedding: %v, read as none", err)
		case int64(len(v)) != dim.Int64:
			note("embedding has %d values but dim %d, read as none", len(v), dim.Int64)
		case memory.CheckVector(v) != nil:
			note("embedding: %v, read as none", memory.CheckVector(v))
		default:
			m.Embedding = &memory.Embedding{Model: model.String, Dim: len(v), Vector: v}
		}
	}
	if len(problems) > 0 {
		return m, &BadRow{ID: m.ID, Scope: scope, Problem: strings.Join(problems, "; ")}, nil
	}
	return m, nil, nil
}

// finishEpisode reads the episode fields and supersedes without what is
// damaged: a bad episode drops the memory out of its episode (seq with it),
// a bad speaker or supersedes reads as none, a seq out of range as 0.
func finishEpisode(m *memory.Memory, note func(string, ...any)) {
	if err := memory.CheckEpisode(m.Episode); err != nil {
		note("episode %q is not valid, read as none", m.Episode)
		m.Episode, m.Seq = "", 0
	}
	if m.Seq < 0 || m.Seq > memory.MaxSeq || (m.Seq != 0 && m.Episode == "") {
		note("seq %d out of range, read as 0", m.Seq)
		m.Seq = 0
	}
	if memory.CheckSpeaker(m.Speaker) != nil {
		note("speaker %q is not valid, read as none", m.Speaker)
		m.Speaker = ""
	}
	if m.Supersedes != "" && (memory.CheckID(m.Supersedes) != nil || m.Supersedes == m.ID) {
		note("supersedes %q is not a valid id, read as none", m.Supersedes)
		m.Supersedes = ""
	}
}

// inRange is t within memory.MinTime..MaxTime, noting a time moved into it.
func inRange(t time.Time, field string, note func(string, ...any)) time.Time {
	switch {
	case t.Before(memory.MinTime):
		note("%s %s before %d, read as %s", field, t.Format(time.RFC3339), memory.MinTime.Year(), memory.MinTime.Format(time.RFC3339))
		return memory.MinTime
	case t.After(memory.MaxTime):
		note("%s %s after %d, read as %s", field, t.Format(time.RFC3339), memory.MaxTime.Year(), memory.MaxTime.Format(time.RFC3339Nano))
		return memory.MaxTime
	}
	return t
}

// decodeLoose reads a row whose columns have unexpected types (a REAL where an
// integer belongs, a blob for text), converting what it can.
func decodeLoose(r scanner) (*memory.Memory, *BadRow, error) {
	vals := make([]any, 25)
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := r.Scan(ptrs...); err != nil {
		return nil, nil, err
	}
	var (
		m        memory.Memory
		problems []string
		skip     string
	)
	note := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	text := func(i int, name string) string {
		switch v := vals[i].(type) {
		case string:
			return v
		case []byte:
			return string(v)
		case int64:
			return strconv.FormatInt(v, 10)
		case float64:
			return strconv.FormatFloat(v, 'g', -1, 64)
		case nil:
			return ""
		}
		note("%s has an unreadable value", name)
		return ""
	}
	// integer reads column i; ok is false when it holds no finite number.
	integer := func(i int) (int64, bool) {
		switch v := vals[i].(type) {
		case int64:
			return v, true
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, false
			}
			if v >= math.MaxInt64 {
				return math.MaxInt64, true
			}
			if v <= math.MinInt64 {
				return math.MinInt64, true
			}
			return int64(v), true
		case string:
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		case []byte:
			n, err := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64)
			return n, err == nil
		}
		return 0, false
	}
	m.ID, m.Name, m.Description, m.Text = text(0, "id"), text(1, "name"), text(2, "description"), text(3, "text")
	m.Type, m.Scene = text(4, "type"), text(5, "scene")
	scope, tags, metadata := text(6, "scope"), text(7, "tags"), text(9, "metadata")
	m.Source = text(8, "source")
	fav, _ := integer(10)
	created, ok := integer(11)
	if !ok {
		skip = "created_at is not a time"
	}
	updated, ok := integer(12)
	if !ok {
		updated = created
		note("updated_at is not a time, read as created_at")
	}
	if n, ok := integer(13); ok {
		m.Uses = n
	} else {
		note("uses is not a number, read as 0")
	}
	switch v := vals[14].(type) {
	case float64:
		m.Demand = v
	case int64:
		m.Demand = float64(v)
	default:
		note("demand is not a number, read as 0")
	}
	var demandAt sql.NullInt64
	if vals[15] != nil {
		if n, ok := integer(15); ok {
			demandAt = sql.NullInt64{Int64: n, Valid: true}
		} else {
			note("demand_at is not a time, read as never")
		}
	}
	m.ContentHash = text(16, "content_hash")
	var model sql.NullString
	if vals[17] != nil {
		model = sql.NullString{String: text(17, "embed_model"), Valid: true}
	}
	var dim sql.NullInt64
	if n, ok := integer(18); ok {
		dim = sql.NullInt64{Int64: n, Valid: true}
	}
	var blob []byte
	switch v := vals[19].(type) {
	case []byte:
		blob = v
	case nil:
	default:
		note("embedding is not a blob, read as none")
		model.Valid = false
	}
	m.Episode, m.Speaker, m.Supersedes = text(20, "episode"), text(22, "speaker"), text(24, "supersedes")
	if vals[21] != nil {
		if n, ok := integer(21); ok {
			m.Seq = n
		} else {
			note("seq is not a number, read as 0")
		}
	}
	var occurred sql.NullInt64
	if vals[23] != nil {
		if n, ok := integer(23); ok {
			occurred = sql.NullInt64{Int64: n, Valid: true}
		} else {
			note("occurred_at is not a time, read as created_at")
		}
	}
	if skip != "" {
		return nil, &BadRow{ID: m.ID, Scope: scope, Problem: strings.Join(append(problems, skip), "; "), Skipped: true}, nil
	}
	return finish(&m, scope, tags, metadata, int(fav), created, updated, demandAt, occurred, model, dim, blob, problems)
}

// parseScope reads a scope column: a JSON object of strings.
func parseScope(raw string) (map[string]string, error) {
	var sc map[string]string
	if err := json.Unmarshal([]byte(raw), &sc); err != nil {
		return nil, err
	}
	if sc == nil {
		return nil, fmt.Errorf("null")
	}
	return sc, nil
}
