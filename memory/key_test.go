package memory

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// FuzzScopeJSON: the canonical scope text is byte for byte what encoding/json
// writes for the map, so stores and the engine agree on every key, and a key
// splits back into its id and scope.
func FuzzScopeJSON(f *testing.F) {
	for _, s := range [][2]string{{"team", "t1"}, {"a<b", "&c"}, {"\xff", "\u2028"}, {"k\"", "v\\"}, {"", ""}, {"ü", "日本"}} {
		f.Add(s[0], s[1], "user", "u1")
	}
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		scope := map[string]string{k1: v1, k2: v2}
		want, err := json.Marshal(scope)
		if err != nil {
			t.Skip()
		}
		if got := ScopeJSON(scope); got != string(want) {
			t.Fatalf("ScopeJSON(%q) = %s, json.Marshal %s", scope, got, want)
		}
		id, sj := SplitKey(Key("id-1", scope))
		if id != "id-1" || sj != string(want) {
			t.Fatalf("SplitKey = %q, %q", id, sj)
		}
	})
}

// FuzzParseScope: ParseScope never panics, and what it accepts is a valid
// scope that formats and parses back to itself.
func FuzzParseScope(f *testing.F) {
	for _, s := range []string{"team=t1", "team=t1,user=u7", " a = b ", "a=b,a=c", "=x", "k=", "a=b=c", ",,,", "k\x00=v", "é=ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		scope, err := ParseScope(in)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("ParseScope(%q): error %v does not wrap ErrInvalid", in, err)
			}
			return
		}
		if err := ValidateScope(scope); err != nil {
			t.Fatalf("ParseScope(%q) accepted an invalid scope: %v", in, err)
		}
		back, err := ParseScope(FormatScope(scope))
		if err != nil || ScopeJSON(back) != ScopeJSON(scope) {
			t.Fatalf("ParseScope(FormatScope(%q)) = %q, %v", scope, back, err)
		}
	})
}

func TestCheckStored(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		edit func(m *Memory)
		says string
	}{
		{"ok", func(*Memory) {}, ""},
		{"after 2261", func(m *Memory) { m.CreatedAt = time.Date(2500, 1, 1, 0, 0, 0, 0, time.UTC) }, "created_at"},
		{"before 1678", func(m *Memory) { m.UpdatedAt = time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC) }, "updated_at"},
		{"zero time", func(m *Memory) { m.CreatedAt = time.Time{} }, "created_at"},
		{"demand_at", func(m *Memory) { t := time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC); m.DemandAt = &t }, "demand_at"},
		{"uses too high", func(m *Memory) { m.Uses = 1<<63 - 1 }, "uses"},
		{"uses negative", func(m *Memory) { m.Uses = -1 }, "uses"},
		{"demand NaN", func(m *Memory) { m.Demand = nan() }, "demand"},
		{"demand too high", func(m *Memory) { m.Demand = 1e308 }, "demand"},
		{"zero vector", func(m *Memory) { m.Embedding = &Embedding{Model: "m", Dim: 2, Vector: []float32{0, 0}} }, "zero"},
		{"NaN vector", func(m *Memory) { m.Embedding = &Embedding{Model: "m", Dim: 2, Vector: []float32{float32(nan()), 1}} }, "NaN"},
		{"occurred_at", func(m *Memory) { m.OccurredAt = time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC) }, "occurred_at"},
		{"occurred_at not set", func(m *Memory) { m.OccurredAt = time.Time{} }, "occurred_at"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &Memory{ID: "a", Text: "t", Type: "note", CreatedAt: at, UpdatedAt: at, OccurredAt: at}
			c.edit(m)
			err := m.CheckStored()
			if c.says == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("CheckStored = %v, want ErrInvalid naming %q", err, c.says)
			}
		})
	}
	if err := CheckZeroTimes([]byte(`{"text":"a","created_at":"0001-01-01T00:00:00Z"}`)); err == nil {
		t.Fatal("an explicit zero created_at passed")
	}
	if err := CheckZeroTimes([]byte(`{"text":"a","occurred_at":"0001-01-01T00:00:00Z"}`)); err == nil {
		t.Fatal("an explicit zero occurred_at passed")
	}
	if err := CheckZeroTimes([]byte(`{"text":"a"}`)); err != nil {
		t.Fatalf("no time given: %v", err)
	}
}

func nan() float64 { z := 0.0; return z / z }

func TestPick(t *testing.T) {
	a := map[string]string{"team": "a"}
	au1 := map[string]string{"team": "a", "user": "u1"}
	au2 := map[string]string{"team": "a", "user": "u2"}
	b := map[string]string{"team": "b"}
	for _, tc := range []struct {
		name      string
		scope     map[string]string
		scopes    []map[string]string
		want      int
		ambiguous bool
	}{
		{"none", a, nil, -1, false},
		{"only one outside", a, []map[string]string{b}, -1, false},
		{"the only one inside", a, []map[string]string{b, au1}, 1, false},
		{"exact before the one inside", a, []map[string]string{au1, a}, 1, false},
		{"exact among several inside", au1, []map[string]string{a, au1, au2}, 1, false},
		{"two inside, none exact", a, []map[string]string{au1, au2}, -1, true},
		{"the whole store, one", nil, []map[string]string{au2}, 0, false},
		{"the whole store, an unscoped one and a tenant's", nil, []map[string]string{b, {}}, 1, false},
		{"the whole store, two tenants", nil, []map[string]string{a, b}, -1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Pick("m1", tc.scope, tc.scopes)
			if got != tc.want || errors.Is(err, ErrAmbiguous) != tc.ambiguous {
				t.Fatalf("Pick = %d, %v; want %d, ambiguous %v", got, err, tc.want, tc.ambiguous)
			}
			if tc.ambiguous && !errors.Is(err, ErrInvalid) {
				t.Errorf("%v does not wrap ErrInvalid", err)
			}
		})
	}
}
