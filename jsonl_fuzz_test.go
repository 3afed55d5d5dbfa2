package engram_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
)

// FuzzParseJSONL: the import parser never panics; every line is either a
// valid memory or an error naming its line; valid memories re-encode and parse
// back to the same memory.
func FuzzParseJSONL(f *testing.F) {
	seeds := []string{
		`{"text":"a"}`,
		`{"id":"x","text":"b","scope":{"team":"t1"},"tags":["z","a","a"],"metadata":{"k":1}}`,
		"{\"text\":\"a\"}\n\n{\"text\":\"b\"}\n",
		`{"text":5}`, `{"txt":"a"}`, `[1,2]`, `{"text":"a"} {"text":"b"}`, "\xff\xfe",
		`{"text":"a","embedding":{"model":"m","dim":2,"vector":[1,2]}}`,
		`{"text":"a","embedding":{"model":"m","dim":3,"vector":[1,2]}}`,
		`{"text":"a","created_at":"2026-11-30T08:00:00Z","scope":{"a=b":"c"}}`,
		`{"text":"a","created_at":"0001-01-01T00:00:00Z"}`, `{"text":"a","created_at":"2500-01-01T00:00:00Z"}`,
		`{"text":"a","uses":9223372036854775807}`, `{"text":"a","demand":1e308,"demand_at":"2026-01-01T00:00:00Z"}`,
		`{"text":"a","embedding":{"model":"m","dim":2,"vector":[0,0]}}`,
		`{"text":"a","episode":"chat 7","seq":3,"speaker":"Caroline","occurred_at":"2023-05-08T13:56:00Z"}`,
		`{"text":"a","seq":3}`, `{"text":"a","episode":" chat"}`, `{"text":"a","episode":"c","seq":-1}`,
		`{"text":"a","occurred_at":"0001-01-01T00:00:00Z"}`, `{"id":"x","text":"a","supersedes":"x"}`,
		`{"text":"a","supersedes":"old id"}`, `{"text":"a","episode":"c","seq":9007199254740993}`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		mems, bad, err := engram.ParseJSONL(strings.NewReader(in))
		if err != nil {
			return // an over-long line: reported as a whole
		}
		lines := strings.Count(in, "\n") + 1
		for _, b := range bad {
			if b.Line < 1 || b.Line > lines || b.Err == "" {
				t.Fatalf("bad line report %+v for %d lines", b, lines)
			}
		}
		for _, m := range mems {
			// Times not given mean "now" and are filled as Add fills them; an
			// explicit zero time is refused (it would silently become now).
			if m.CreatedAt.IsZero() {
				m.CreatedAt = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
			}
			if m.UpdatedAt.IsZero() {
				m.UpdatedAt = m.CreatedAt
			}
			enc, err := json.Marshal(m)
			if err != nil {
				t.Fatalf("valid memory does not encode: %v", err)
			}
			back, err := engram.ParseMemoryJSON(enc)
			if err != nil {
				t.Fatalf("re-parse of %s: %v", enc, err)
			}
			again, _ := json.Marshal(back)
			if !bytes.Equal(enc, again) {
				t.Fatalf("round trip changed the memory:\n%s\n%s", enc, again)
			}
		}
	})
}
