package weaviate

import (
	"encoding/json"
	"fmt"
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

// clause is one filter condition (op a comparison on path with texts or a
// date) or a conjunction or disjunction of clauses (op "And" or "Or" with
// sub), which either transport renders: graphql for REST, proto for gRPC.
type clause struct {
	op    string // Weaviate's operator name: Equal, ContainsAll, LessThan, …, And, Or
	path  string
	texts []string // the text value(s); list: a text array
	list  bool
	date  *time.Time
	sub   []clause
}

func textClause(path, op string, v string) clause {
	return clause{op: op, path: path, texts: []string{v}}
}

func textsClause(path, op string, vs []string) clause {
	return clause{op: op, path: path, texts: vs, list: true}
}

func dateClause(path, op string, t time.Time) clause { return clause{op: op, path: path, date: &t} }

// graphql renders the clause as a where operand.
func (c clause) graphql() operand {
	switch {
	case c.op == "And" || c.op == "Or":
		ops := make([]operand, len(c.sub))
		for i, s := range c.sub {
			ops[i] = s.graphql()
		}
		return join(c.op, ops)
	case c.date != nil:
		return dateCond(c.path, c.op, *c.date)
	case c.list:
		return cond(c.path, c.op, "valueText", gqlStrings(c.texts))
	}
	return cond(c.path, c.op, "valueText", gqlString(c.texts[0]))
}

// filterOperands pushes every field of f down as where conditions
// (filterClauses).
func filterOperands(f *memory.Filter) ([]operand, error) {
	cs, err := filterClauses(f)
	if err != nil {
		return nil, err
	}
	ops := make([]operand, len(cs))
	for i, c := range cs {
		ops[i] = c.graphql()
	}
	return ops, nil
}

// filterClauses are the conditions of every field of f. The scope keeps its
// tenant key too: the tenant already selects those memories, and the
// condition makes that exact whatever the tenant's name. A value the
// exact-match tokenization would alter is refused (see exactValues).
func filterClauses(f *memory.Filter) ([]clause, error) {
	if err := exactValues(f.Scope, f.Type, f.Scene, f.Source, f.Tags); err != nil {
		return nil, fmt.Errorf("%w: filter: %v", memory.ErrInvalid, err)
	}
	var cs []clause
	if len(f.Scope) > 0 {
		cs = append(cs, textsClause(pScope, "ContainsAll", scopeTerms(f.Scope)))
	}
	for _, p := range []struct{ path, v string }{{pType, f.Type}, {pScene, f.Scene}, {pSource, f.Source}} {
		if p.v != "" {
			cs = append(cs, textClause(p.path, "Equal", p.v))
		}
	}
	if tags := memory.NormalizeTags(f.Tags); len(tags) > 0 {
		cs = append(cs, textsClause(pTags, "ContainsAll", tags))
	}
	if f.Since != nil {
		cs = append(cs, dateClause(pCreated, "GreaterThanEqual", *f.Since))
	}
	if f.Until != nil {
		cs = append(cs, dateClause(pCreated, "LessThan", *f.Until))
	}
	if err := memory.CheckEpisode(f.Episode); err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	if f.Episode != "" {
		cs = append(cs, textClause(pEpisode, "Equal", f.Episode))
	}
	if f.Supersedes != "" {
		if err := memory.CheckID(f.Supersedes); err != nil {
			return nil, fmt.Errorf("filter: supersedes: %w", err)
		}
		cs = append(cs, textClause(pSupersedes, "Equal", f.Supersedes))
	}
	// What was current at T: occurred by then, and superseded (if at all)
	// only later; noSuperseder lies after every time a filter may name.
	// Current (now): superseded by none.
	switch {
	case f.AsOf != nil:
		if err := memory.CheckTime("as_of", *f.AsOf); err != nil {
			return nil, fmt.Errorf("filter: %w", err)
		}
		cs = append(cs, dateClause(pOccurred, "LessThanEqual", *f.AsOf), dateClause(pSupersededAt, "GreaterThan", *f.AsOf))
	case f.Current:
		cs = append(cs, dateClause(pSupersededAt, "Equal", noSuperseder))
	}
	return cs, nil
}

// windowsClause matches the memories that occurred inside one of the
// windows (Since inclusive, Until exclusive); false for no windows. The
// bounds are clamped to the times Weaviate can compare (Unix nanoseconds).
func windowsClause(windows []memory.TimeWindow) (clause, bool) {
	clamp := func(t time.Time) time.Time {
		switch {
		case t.Before(memory.MinTime):
			return memory.MinTime
		case t.After(noSuperseder):
			return noSuperseder
		}
		return t
	}
	if len(windows) == 0 {
		return clause{}, false
	}
	var ors []clause
	for _, w := range windows {
		if !w.Since.Before(w.Until) {
			continue // empty: matches nothing
		}
		ors = append(ors, clause{op: "And", sub: []clause{dateClause(pOccurred, "GreaterThanEqual", clamp(w.Since)),
			dateClause(pOccurred, "LessThan", clamp(w.Until))}})
	}
	switch len(ors) {
	case 0: // only empty windows: a condition nothing meets
		return dateClause(pOccurred, "LessThan", memory.MinTime), true
	case 1:
		return ors[0], true
	}
	return clause{op: "Or", sub: ors}, true
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
