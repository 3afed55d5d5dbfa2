package httpapi

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"time"
)

// validator checks JSON values against the subset of JSON Schema (2020-12, as
// OpenAPI 3.1 uses it) that openapi.json is written in: $ref, type (one or a
// list), properties, required, additionalProperties, items, enum, oneOf,
// allOf, minimum, maximum and format date-time.
type validator struct {
	doc map[string]any
}

// validate returns every violation of schema by v, as "path: problem".
func (vd *validator) validate(schema map[string]any, v any, path string) []string {
	if ref, ok := schema["$ref"].(string); ok {
		return vd.validate(vd.resolve(ref), v, path)
	}
	var errs []string
	fail := func(format string, a ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, a...)) }
	if t, ok := schema["type"]; ok && !typeMatches(t, v) {
		fail("want type %v, got %s", t, kindOf(v))
		return errs
	}
	if enum, ok := schema["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			if e == v {
				found = true
			}
		}
		if !found {
			fail("%v is not one of %v", v, enum)
		}
	}
	if n, ok := v.(float64); ok {
		if min, ok := schema["minimum"].(float64); ok && n < min {
			fail("%v is below the minimum %v", n, min)
		}
		if max, ok := schema["maximum"].(float64); ok && n > max {
			fail("%v is above the maximum %v", n, max)
		}
	}
	if s, ok := v.(string); ok && schema["format"] == "date-time" {
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			fail("%q is not a date-time", s)
		}
	}
	if s, ok := v.(string); ok {
		if pat, ok := schema["pattern"].(string); ok && !regexp.MustCompile(pat).MatchString(s) {
			fail("%q does not match the pattern %s", s, pat)
		}
	}
	if subs, ok := schema["allOf"].([]any); ok {
		for _, sub := range subs {
			errs = append(errs, vd.validate(sub.(map[string]any), v, path)...)
		}
	}
	if subs, ok := schema["oneOf"].([]any); ok {
		matched := 0
		var why []string
		for _, sub := range subs {
			e := vd.validate(sub.(map[string]any), v, path)
			if len(e) == 0 {
				matched++
			}
			why = append(why, e...)
		}
		if matched != 1 {
			fail("matches %d of oneOf's %d schemas, want 1 (%s)", matched, len(subs), strings.Join(why, "; "))
		}
	}
	if obj, ok := v.(map[string]any); ok {
		props, _ := schema["properties"].(map[string]any)
		if req, ok := schema["required"].([]any); ok {
			for _, r := range req {
				if _, ok := obj[r.(string)]; !ok {
					fail("required property %q is missing", r)
				}
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if ps, ok := props[k].(map[string]any); ok {
				errs = append(errs, vd.validate(ps, obj[k], path+"."+k)...)
				continue
			}
			switch ap := schema["additionalProperties"].(type) {
			case bool:
				if !ap {
					fail("property %q is not allowed", k)
				}
			case map[string]any:
				errs = append(errs, vd.validate(ap, obj[k], path+"."+k)...)
			}
		}
	}
	if arr, ok := v.([]any); ok {
		if items, ok := schema["items"].(map[string]any); ok {
			for i, it := range arr {
				errs = append(errs, vd.validate(items, it, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	}
	return errs
}

// resolve follows a local reference such as "#/components/schemas/Memory".
func (vd *validator) resolve(ref string) map[string]any {
	var cur any = vd.doc
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			panic("bad $ref " + ref)
		}
		cur = m[part]
	}
	m, ok := cur.(map[string]any)
	if !ok {
		panic("unresolved $ref " + ref)
	}
	return m
}

func typeMatches(t any, v any) bool {
	switch t := t.(type) {
	case string:
		return kindMatches(t, v)
	case []any:
		for _, one := range t {
			if kindMatches(one.(string), v) {
				return true
			}
		}
	}
	return false
}

func kindMatches(t string, v any) bool {
	k := kindOf(v)
	if t == "number" && k == "integer" {
		return true
	}
	return t == k
}

func kindOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if v == math.Trunc(v) && !math.IsInf(v, 0) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// decodeAny decodes JSON into generic values.
func decodeAny(data []byte) (any, error) {
	var v any
	err := json.Unmarshal(data, &v)
	return v, err
}
