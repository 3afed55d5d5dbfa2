package engram

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/internal/jsonerr"
	"github.com/engram-memory/engram/memory"
)

// MaxLineBytes bounds one JSONL line of an import.
const MaxLineBytes = 16 << 20

// ErrLineTooLong is an import line longer than MaxLineBytes. It wraps
// ErrInvalid.
var ErrLineTooLong = fmt.Errorf("%w: import line too long", ErrInvalid)

// ImportOptions control Import.
type ImportOptions struct {
	// SkipInvalid imports the valid lines and reports the others; without it
	// one invalid line rejects the whole import and nothing is stored.
	SkipInvalid bool
	// Progress, when set, hears how many of the memories to embed are done.
	Progress func(done, total int) `json:"-"`
}

// LineError is one rejected line of an import.
type LineError struct {
	Line int    `json:"line"`
	Err  string `json:"error"`
}

func (e LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Err) }

// ImportResult says what Import did.
type ImportResult struct {
	AddResult
	Skipped []LineError `json:"skipped,omitempty"`
}

// ParseJSONL reads memories from JSONL, one object a line (blank lines are
// skipped). It returns the parsed memories and, per invalid line, its error.
func ParseJSONL(r io.Reader) ([]*Memory, []LineError, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLineBytes)
	var (
		mems []*Memory
		bad  []LineError
		line int
		ids  = map[string]int{}
	)
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		m, err := ParseMemoryJSON(b)
		if err == nil && m.ID != "" {
			if prev, dup := ids[m.Key()]; dup {
				err = fmt.Errorf("id %q repeats line %d in the same scope", m.ID, prev)
			} else {
				ids[m.Key()] = line
			}
		}
		if err != nil {
			// "line 3: field ...", not "line 3: invalid: field ...": the
			// import's error already says invalid.
			bad = append(bad, LineError{Line: line, Err: strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": ")})
			continue
		}
		mems = append(mems, m)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, nil, fmt.Errorf("%w: line %d: longer than %d bytes", ErrLineTooLong, line+1, MaxLineBytes)
		}
		return nil, nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	return mems, bad, nil
}

// ParseMemoryJSON decodes and validates one memory object. Unknown fields and
// wrong types are errors that name the field.
func ParseMemoryJSON(b []byte) (*Memory, error) {
	if !utf8.Valid(b) {
		return nil, errors.New("not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var m Memory
	if err := dec.Decode(&m); err != nil {
		return nil, describeJSONError(err, b)
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value on the line")
	}
	if err := memory.CheckZeroTimes(b); err != nil {
		return nil, err
	}
	// The same checks Add makes, so an import fails here, with a line number.
	if _, err := prepare(&m, time.Now()); err != nil {
		return nil, err
	}
	return &m, nil
}

// describeJSONError turns encoding/json errors into one line naming the
// field and the kind of value it takes, in JSON's words.
func describeJSONError(err error, line []byte) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("incomplete JSON object")
	}
	return jsonerr.Describe(err, line, "created_at", "updated_at", "demand_at", "occurred_at")
}

// Import loads memories from JSONL in one write (see ImportOptions), into
// the view's scope.
func (v view) Import(ctx context.Context, r io.Reader, opt ImportOptions) (ImportResult, error) {
	var res ImportResult
	mems, bad, err := ParseJSONL(r)
	if err != nil {
		return res, err
	}
	if len(bad) > 0 && !opt.SkipInvalid {
		return res, fmt.Errorf("%w: %w (nothing imported; %d invalid line(s))", ErrInvalid, bad[0], len(bad))
	}
	res.Skipped = bad
	if len(mems) == 0 {
		res.IDs = []string{} // "ids": [], not null: nothing imported is an empty list
		return res, nil
	}
	res.AddResult, err = v.add(ctx, mems, opt.Progress, false)
	return res, err
}

// Export writes every memory in the view as JSONL in id order; Import of it
// restores the store exactly, embeddings included.
func (v view) Export(ctx context.Context, w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	q := backend.ListQuery{Filter: memory.Filter{Scope: v.scope}, Vectors: true}
	if err := v.e.be.List(ctx, q, func(m *memory.Memory) error { return enc.Encode(m) }); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return bw.Flush()
}
