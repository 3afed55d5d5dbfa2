package weaviate

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/weaviatetest"
	"github.com/engram-memory/engram/memory"
)

// schema2 is testdata/schema2.json: per tokenizer, the class definition and
// two objects exactly as the Engram of schema 2 made them (its newClass and
// encode, tenant key "team"), frozen when schema 3 came.
type schema2 map[string]struct {
	Class   map[string]any   `json:"class"`
	Objects []map[string]any `json:"objects"`
}

func readSchema2(t *testing.T) schema2 {
	t.Helper()
	raw, err := os.ReadFile("testdata/schema2.json")
	if err != nil {
		t.Fatal(err)
	}
	var s schema2
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// rawClient talks to the test server without a Store.
func rawClient(t *testing.T, base string) *client {
	t.Helper()
	cfg := Config{Endpoint: base, GRPCPort: weaviatetest.GRPCPort(t, base)}
	if err := cfg.withDefaults(); err != nil {
		t.Fatal(err)
	}
	c := newClient(cfg)
	t.Cleanup(c.close)
	return c
}

// writeSchema2 creates a class of the previous layout under name and
// stores its objects.
func writeSchema2(t *testing.T, c *client, fixture schema2, tokenizer, name string) {
	t.Helper()
	ctx := ctxT(t)
	class := fixture[tokenizer].Class
	class["class"] = name
	if err := c.do(ctx, http.MethodPost, "/v1/schema", nil, class, nil); err != nil {
		t.Fatalf("create the schema-2 class: %v", err)
	}
	objs := fixture[tokenizer].Objects
	for _, o := range objs {
		o["class"] = name
	}
	var res []struct {
		Result struct {
			Errors struct {
				Error []graphQLError `json:"error"`
			} `json:"errors"`
		} `json:"result"`
	}
	if err := c.do(ctx, http.MethodPost, "/v1/batch/objects", nil, map[string]any{"objects": objs}, &res); err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if len(r.Result.Errors.Error) > 0 {
			t.Fatalf("store a schema-2 object: %v", r.Result.Errors.Error)
		}
	}
}

// TestUpgradeFromSchema2: a class the previous Engram wrote is upgraded in
// place when opened: its objects hold occurred_at (their created_at),
// superseded by none, their day and terms, and keep every other field and
// their vectors; the current-only, as-of and keyword searches work on them;
// the class says this schema; and opening it again writes nothing.
func TestUpgradeFromSchema2(t *testing.T) {
	fixture := readSchema2(t)
	for _, tok := range []string{TokenizerEngram, TokenizerWord} {
		t.Run(tok, func(t *testing.T) {
			base := weaviatetest.URL(t)
			name := weaviatetest.Class(t, base)
			c := rawClient(t, base)
			writeSchema2(t, c, fixture, tok, name)
			ctx := ctxT(t)
			cfg := Config{Endpoint: base, GRPCPort: weaviatetest.GRPCPort(t, base), Class: name, TenantKey: "team", Tokenizer: tok}
			// What the schema-2 Engram read from these objects, before the upgrade.
			var before []*memory.Memory
			for _, o := range fixture[tok].Objects {
				raw, _ := json.Marshal(o["properties"])
				var f fields
				if err := json.Unmarshal(raw, &f); err != nil {
					t.Fatal(err)
				}
				f.Additional.Vectors = map[string]json.RawMessage{}
				vecs, _ := o["vectors"].(map[string]any)
				for k, v := range vecs {
					f.Additional.Vectors[k], _ = json.Marshal(v)
				}
				m, err := f.decode(true)
				if err != nil {
					t.Fatal(err)
				}
				before = append(before, m)
			}

			s, err := Open(ctx, cfg)
			if err != nil {
				t.Fatalf("open the schema-2 class: %v", err)
			}
			defer s.Close()
			info, err := s.getClass(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if meta, err := s.checkMeta(info); err != nil || meta != s.meta() {
				t.Fatalf("class meta after the upgrade: %+v, %v; want %+v", meta, err, s.meta())
			}
			for _, want := range before {
				got, err := s.Get(ctx, want.Scope, want.ID)
				if err != nil {
					t.Fatal(err)
				}
				// Read as before, and now occurring when created.
				want.OccurredAt = want.CreatedAt
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s after the upgrade:\n got %#v\nwant %#v", want.ID, got, want)
				}
			}
			// What the upgrade stored, as stored (a missing occurred_at or
			// superseded_at would read the same through decode).
			objs, err := s.get(ctx, "t1", "limit:10", pID+" "+pCreated+" "+pOccurred+" "+pSupersededBy+" "+pSupersededAt+" "+pDay+
				" "+pTextKey+" _additional{id lastUpdateTimeUnix}")
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) != len(before) {
				t.Fatalf("%d objects in tenant t1, want %d", len(objs), len(before))
			}
			enc := s.enc()
			updated := map[string]string{}
			for _, o := range objs {
				created, _ := parseTime(o.Created)
				if !sameTime(o.Occurred, o.Created) || o.SuperBy != "" || !sameTime(o.SuperAt, formatTime(noSuperseder)) ||
					o.Day != enc.day(&memory.Memory{CreatedAt: created, OccurredAt: created}, created) {
					t.Errorf("%s stored with occurred_at %q (created %q), superseded %q at %q, day %q", o.ID, o.Occurred, o.Created, o.SuperBy, o.SuperAt, o.Day)
				}
				updated[o.ID] = string(o.Additional.LastUpdate)
				// Schema 4: the text key a repeat is found by.
				for _, m := range before {
					if m.ID == o.ID && o.TextKey != memory.TextKey(m.Text) {
						t.Errorf("%s stored with text key %q, want %q", o.ID, o.TextKey, memory.TextKey(m.Text))
					}
				}
			}
			// The filters that read the new fields.
			team := map[string]string{"team": "t1"}
			asOf := time.Date(2023, 5, 9, 0, 0, 0, 0, time.UTC) // 01ONE occurred on the 8th, 01TWO on the 10th
			for _, c := range []struct {
				f    memory.Filter
				want []string
			}{
				{memory.Filter{Scope: team, Current: true}, []string{"01ONE", "01TWO"}},
				{memory.Filter{Scope: team, AsOf: &asOf}, []string{"01ONE"}},
			} {
				page, err := s.List(ctx, c.f, "", 10, false)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, m := range page.Memories {
					got = append(got, m.ID)
				}
				slices.Sort(got)
				if !reflect.DeepEqual(got, c.want) {
					t.Errorf("list %+v: %v, want %v", c.f, got, c.want)
				}
			}
			// A memory of schema 2 has no time of its own (it occurred when it
			// was created, in no episode): its day is not indexed, as in
			// Engram's index (index.HasOwnTime), so its day finds nothing.
			hits, err := s.BM25(ctx, LegQuery{Text: "10 May 2023", Filter: memory.Filter{Scope: team}, K: 5})
			if err != nil || len(hits) != 0 {
				t.Errorf("a search for 01TWO's day finds %v, %v; want nothing", hits, err)
			}

			// Opening again finds this schema and rewrites nothing.
			again, err := Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			again.Close()
			objs, err = s.get(ctx, "t1", "limit:10", pID+" _additional{id lastUpdateTimeUnix}")
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				if string(o.Additional.LastUpdate) != updated[o.ID] {
					t.Errorf("%s was written again by a second open (%s, then %s)", o.ID, updated[o.ID], string(o.Additional.LastUpdate))
				}
			}
		})
	}
}

// TestOpenRefusesOtherSchemas: a class of schema 1 (objects keyed by id
// alone) or of a newer schema is refused, and left as it is.
func TestOpenRefusesOtherSchemas(t *testing.T) {
	for _, v := range []int{1, SchemaVersion + 1} {
		t.Run("schema "+strconv.Itoa(v), func(t *testing.T) {
			fixture := readSchema2(t)
			base := weaviatetest.URL(t)
			name := weaviatetest.Class(t, base)
			f := schema2{TokenizerEngram: fixture[TokenizerEngram]}
			class := f[TokenizerEngram].Class
			class["description"] = strings.Replace(class["description"].(string), `"engram":2`, `"engram":`+strconv.Itoa(v), 1)
			writeSchema2(t, rawClient(t, base), f, TokenizerEngram, name)
			_, err := Open(context.Background(), Config{Endpoint: base, GRPCPort: weaviatetest.GRPCPort(t, base), Class: name, TenantKey: "team"})
			if !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "schema "+strconv.Itoa(v)) {
				t.Fatalf("open: %v, want ErrIncompatible naming schema %d", err, v)
			}
		})
	}
}
