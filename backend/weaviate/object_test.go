package weaviate

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/memory"
)

// TestObjectID: the UUIDs of Python's uuid.uuid5 for the same namespace
// and names (the reference implementation of RFC 9562 version 5).
func TestObjectID(t *testing.T) {
	for id, want := range map[string]string{
		"01JDX3Q7Z8K9V2M4N6P8R0S2T4": "cc905b1b-c18c-5c72-bc4d-73f5fc5f59df",
		"abc":                        "96e0e8c6-d781-5b67-94a3-0eabd19097a2",
		"":                           "37aac22f-defd-55e5-bb76-62cfd587287a",
		"tasks_claim":                "cf3c0f55-bd07-5f2a-98b2-4114a2d9fe6d",
		"日本語 id":                     "11fcee39-66c2-502e-95ce-6dcf09f2decc",
	} {
		if got := ObjectID(id); got != want {
			t.Errorf("ObjectID(%q) = %s, want %s", id, got, want)
		}
	}
}

// TestKeyID: a memory's object is named by its id and full scope
// (memory.Key), so the same id in two scopes is two objects; the UUIDs are
// Python's uuid5 of id + NUL + the scope's canonical JSON.
func TestKeyID(t *testing.T) {
	for _, c := range []struct {
		scope map[string]string
		want  string
	}{
		{nil, "f5c3e8aa-4ce0-51ad-8f5b-e31cfa28d01c"},
		{map[string]string{}, "f5c3e8aa-4ce0-51ad-8f5b-e31cfa28d01c"},
		{map[string]string{"team": "a"}, "2de5935c-5fb2-5568-a601-8f49fb0855fb"},
		{map[string]string{"user": "u1", "team": "a"}, "c320b8fa-4ac0-573f-b078-c96a49823ebb"},
	} {
		if got := KeyID("01X", c.scope); got != c.want {
			t.Errorf("KeyID(01X, %v) = %s, want %s", c.scope, got, c.want)
		}
	}
}

var tenantRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func TestTenantName(t *testing.T) {
	cases := []struct{ value, want string }{
		{"", noTenant},
		{"acme", "acme"},
		{"team-7", "team-7"},
		{"Acme", "x_"}, // upper case: hashed (tenant names are compared case-blind on some file systems)
		{"a b", "x_"},
		{"with_underscore", "x_"},
		{strings.Repeat("a", 65), "x_"},
		{"日本", "x_"},
	}
	seen := map[string]string{}
	for _, c := range cases {
		got := TenantName(c.value)
		if !tenantRE.MatchString(got) {
			t.Errorf("TenantName(%q) = %q is not a valid Weaviate tenant name", c.value, got)
		}
		if !strings.HasPrefix(got, c.want) || (c.want != "x_" && got != c.want) {
			t.Errorf("TenantName(%q) = %q, want %q…", c.value, got, c.want)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("TenantName(%q) = TenantName(%q) = %q", c.value, other, got)
		}
		seen[got] = c.value
	}
}

func FuzzTenantName(f *testing.F) {
	f.Add("acme", "Acme")
	f.Fuzz(func(t *testing.T, a, b string) {
		na, nb := TenantName(a), TenantName(b)
		if !tenantRE.MatchString(na) {
			t.Fatalf("TenantName(%q) = %q is not a valid tenant name", a, na)
		}
		if a != b && na == nb {
			t.Fatalf("TenantName(%q) = TenantName(%q) = %q", a, b, na)
		}
	})
}

var vectorNameRE = regexp.MustCompile(`^[_A-Za-z][_0-9A-Za-z]{0,229}$`)

func TestVectorName(t *testing.T) {
	a := VectorName("glove100-mean-v1", 100)
	if a != "v_glove100_mean_v1_d100_"+a[len(a)-8:] || !vectorNameRE.MatchString(a) {
		t.Errorf("VectorName = %q", a)
	}
	names := map[string]bool{}
	for _, m := range []struct {
		model string
		dim   int
	}{{"glove100-mean-v1", 100}, {"glove100-mean-v1", 50}, {"glove100_mean_v1", 100}, {"openai:text-embedding-3-small", 1536}, {strings.Repeat("m", 500), 3}} {
		n := VectorName(m.model, m.dim)
		if !vectorNameRE.MatchString(n) {
			t.Errorf("VectorName(%q, %d) = %q is not a valid vector name", m.model, m.dim, n)
		}
		if names[n] {
			t.Errorf("VectorName(%q, %d) = %q is taken", m.model, m.dim, n)
		}
		names[n] = true
	}
}

// TestEncodeDecode: a memory's object, as JSON, decodes back to the same
// memory (the server half of the round trip is TestRoundTrip).
func TestEncodeDecode(t *testing.T) {
	superseded := full("s")
	superseded.Superseded = &memory.Supersession{By: "01NEW", At: t0.Add(time.Hour + 7)}
	for _, m := range []*memory.Memory{full("f"), mem("m", "minimal", nil), superseded} {
		o, err := encoder{class: "C"}.encode("t", m)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(o.Properties)
		if err != nil {
			t.Fatal(err)
		}
		var f fields
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatal(err)
		}
		f.Additional.Vectors = map[string]json.RawMessage{}
		for name, v := range o.Vectors {
			f.Additional.Vectors[name], _ = json.Marshal(v)
		}
		got, err := f.decode(true)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("round trip:\n got %#v\nwant %#v", got, m)
		}
	}
}

// FuzzDecode: whatever a server answers, decoding returns a memory or an
// error, never panics.
func FuzzDecode(f *testing.F) {
	o, _ := encoder{class: "C"}.encode("", full("f"))
	seed, _ := json.Marshal(o.Properties)
	f.Add(seed, true)
	f.Add([]byte(`{"mem_id":"x","scope":["no-equals"],"created_at":"2026-01-01T00:00:00Z"}`), false)
	f.Add([]byte(`{"mem_id":"x","embed_model":"m","embed_dim":1e300,"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}`), true)
	f.Fuzz(func(t *testing.T, data []byte, withVector bool) {
		var fl fields
		if json.Unmarshal(data, &fl) != nil {
			return
		}
		m, err := fl.decode(withVector)
		if err == nil && (m == nil || m.ID == "") {
			t.Fatalf("decode gave %v without an error", m)
		}
	})
}
