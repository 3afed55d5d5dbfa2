package weaviate

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/engram-memory/engram/memory"
)

// GraphQL literals. A JSON string is a valid GraphQL string literal (JSON's
// escapes are a subset of GraphQL's), so every user value goes through
// json.Marshal and no input can break out of its literal.

func gqlString(s string) string {
	b, _ := json.Marshal(s) // cannot fail for a string
	return string(b)
}

func gqlStrings(ss []string) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = gqlString(s)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// gqlVector renders float32s with the fewest digits that read back as the
// same float32.
func gqlVector(v []float32) string {
	b := make([]byte, 0, len(v)*11+2)
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, float64(x), 'g', -1, 32)
	}
	return string(append(b, ']'))
}

// operand is one where-filter condition (or a conjunction of them).
type operand string

func cond(path, op, valueKind, value string) operand {
	return operand(`{path:[` + gqlString(path) + `],operator:` + op + `,` + valueKind + `:` + value + `}`)
}

// where renders a conjunction of operands, or "" when there are none.
func where(ops []operand) string { return string(join("And", ops)) }

// join combines operands with And or Or ("" for none).
func join(op string, ops []operand) operand {
	switch len(ops) {
	case 0:
		return ""
	case 1:
		return ops[0]
	}
	parts := make([]string, len(ops))
	for i, o := range ops {
		parts[i] = string(o)
	}
	return operand(`{operator:` + op + `,operands:[` + strings.Join(parts, ",") + `]}`)
}

// dateCond compares a date property with t.
func dateCond(path, op string, t time.Time) operand {
	return cond(path, op, "valueDate", gqlString(formatTime(t)))
}

// filterOperands pushes every field of f down as where conditions. The scope
// keeps its tenant key too: the tenant already selects those memories, and
// the condition makes that exact whatever the tenant's name. A value the
// exact-match tokenization would alter is refused (see exactValues).
func filterOperands(f *memory.Filter) ([]operand, error) {
	if err := exactValues(f.Scope, f.Type, f.Scene, f.Source, f.Tags); err != nil {
		return nil, fmt.Errorf("%w: filter: %v", memory.ErrInvalid, err)
	}
	var ops []operand
	if len(f.Scope) > 0 {
		ops = append(ops, cond(pScope, "ContainsAll", "valueText", gqlStrings(scopeTerms(f.Scope))))
	}
	if f.Type != "" {
		ops = append(ops, cond(pType, "Equal", "valueText", gqlString(f.Type)))
	}
	if f.Scene != "" {
		ops = append(ops, cond(pScene, "Equal", "valueText", gqlString(f.Scene)))
	}
	if f.Source != "" {
		ops = append(ops, cond(pSource, "Equal", "valueText", gqlString(f.Source)))
	}
	if tags := memory.NormalizeTags(f.Tags); len(tags) > 0 {
		ops = append(ops, cond(pTags, "ContainsAll", "valueText", gqlStrings(tags)))
	}
	if f.Since != nil {
		ops = append(ops, cond(pCreated, "GreaterThanEqual", "valueDate", gqlString(formatTime(*f.Since))))
	}
	if f.Until != nil {
		ops = append(ops, cond(pCreated, "LessThan", "valueDate", gqlString(formatTime(*f.Until))))
	}
	if err := memory.CheckEpisode(f.Episode); err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	if f.Episode != "" {
		ops = append(ops, cond(pEpisode, "Equal", "valueText", gqlString(f.Episode)))
	}
	if f.Supersedes != "" {
		if err := memory.CheckID(f.Supersedes); err != nil {
			return nil, fmt.Errorf("filter: supersedes: %w", err)
		}
		ops = append(ops, cond(pSupersedes, "Equal", "valueText", gqlString(f.Supersedes)))
	}
	// What was current at T: occurred by then, and superseded (if at all)
	// only later; noSuperseder lies after every time a filter may name.
	// Current (now): superseded by none.
	switch {
	case f.AsOf != nil:
		if err := memory.CheckTime("as_of", *f.AsOf); err != nil {
			return nil, fmt.Errorf("filter: %w", err)
		}
		ops = append(ops, dateCond(pOccurred, "LessThanEqual", *f.AsOf), dateCond(pSupersededAt, "GreaterThan", *f.AsOf))
	case f.Current:
		ops = append(ops, dateCond(pSupersededAt, "Equal", noSuperseder))
	}
	return ops, nil
}

// windowsOperand matches the memories that occurred inside one of the
// windows (Since inclusive, Until exclusive), or "" for none. The bounds are
// clamped to the times Weaviate can compare (Unix nanoseconds).
func windowsOperand(windows []memory.TimeWindow) operand {
	clamp := func(t time.Time) time.Time {
		switch {
		case t.Before(memory.MinTime):
			return memory.MinTime
		case t.After(noSuperseder):
			return noSuperseder
		}
		return t
	}
	var ors []operand
	for _, w := range windows {
		if !w.Since.Before(w.Until) {
			continue // empty: matches nothing
		}
		ors = append(ors, join("And", []operand{dateCond(pOccurred, "GreaterThanEqual", clamp(w.Since)),
			dateCond(pOccurred, "LessThan", clamp(w.Until))}))
	}
	if len(ors) == 0 && len(windows) > 0 {
		// Only empty windows: a condition nothing meets.
		return dateCond(pOccurred, "LessThan", memory.MinTime)
	}
	return join("Or", ors)
}

// idsOperand matches the objects of the given Engram ids, in whatever scope
// (an id names one memory per scope).
func idsOperand(ids []string) operand {
	return cond(pID, "ContainsAny", "valueText", gqlStrings(ids))
}

// uuidsOperand matches the objects with these UUIDs.
func uuidsOperand(uuids []string) operand {
	return cond("id", "ContainsAny", "valueText", gqlStrings(uuids))
}
