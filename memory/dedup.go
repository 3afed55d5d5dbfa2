package memory

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Exact duplicates. A memory added without an id whose text, normalised, and
// exact scope equal a stored memory's is the same memory said again (a
// repeat): it is merged into the stored one instead of stored twice. The
// rule is here, in one place; a backend (backend.Merger) finds the stored
// memory by TextKey and applies MergeRepeat inside its write.

// NormalText is the form duplicates are compared in: Unicode NFC (a composed
// "é" and "e" with a combining accent are one), every run of white space
// (newlines included) one space, no leading or trailing white space. Case and
// punctuation are kept: "US" and "us" are different memories. Name and
// description are not part of it: the same text under another name is a
// repeat.
func NormalText(text string) string {
	text = norm.NFC.String(text)
	var b strings.Builder
	b.Grow(len(text))
	space := false
	for _, r := range text {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TextKey is the key a stored memory is found by as a duplicate: the first
// 128 bits of the SHA-256 of NormalText(text), in hex.
func TextKey(text string) string {
	h := sha256.Sum256([]byte(NormalText(text)))
	return hex.EncodeToString(h[:16])
}

// MergeChanges says what a repeat changed on the stored memory it was merged
// into; all empty when it brought nothing new.
type MergeChanges struct {
	// Tags are the repeat's tags the stored memory lacked: added.
	Tags []string `json:"tags_added,omitempty"`
	// Favorite is set when the repeat marked the memory a favorite (a
	// repeat never unmarks one).
	Favorite bool `json:"favorite_set,omitempty"`
	// Metadata lists the metadata keys the repeat added or changed (its
	// value wins for a key both have).
	Metadata []string `json:"metadata_keys,omitempty"`
	// Type is the type the repeat changed the memory to: one it named that
	// differs from the stored one.
	Type string `json:"type_set,omitempty"`
	// Kept lists the repeat's fields that differ from the stored memory's
	// and were not applied, the stored value kept: name, description
	// (they change what the memory's vector is of), source, scene, speaker,
	// supersedes, occurred_at. Update changes them.
	Kept []string `json:"kept,omitempty"`
}

// Changed reports whether the repeat changed the stored memory.
func (c MergeChanges) Changed() bool {
	return len(c.Tags) > 0 || c.Favorite || len(c.Metadata) > 0 || c.Type != ""
}

// MergeRepeat merges repeat (a memory normalised for storing, with
// typeGiven telling whether its caller named its type) into stored, the
// memory it repeats: tags are their union, favorite is either's, metadata
// the stored keys overlaid with the repeat's, type the repeat's when it named
// one; everything else is stored's. It returns what stored becomes (a copy,
// UpdatedAt now; nil when nothing changed) and what changed. Both must
// hold JSON objects (or nothing) as metadata, as Normalize ensures.
func MergeRepeat(stored, repeat *Memory, typeGiven bool, now time.Time) (*Memory, MergeChanges, error) {
	var ch MergeChanges
	m := *stored
	for _, t := range repeat.Tags {
		if !slices.Contains(stored.Tags, t) {
			ch.Tags = append(ch.Tags, t)
		}
	}
	if len(ch.Tags) > 0 {
		m.Tags = NormalizeTags(append(slices.Clone(stored.Tags), ch.Tags...))
	}
	if repeat.Favorite && !stored.Favorite {
		m.Favorite, ch.Favorite = true, true
	}
	if typeGiven && repeat.Type != "" && repeat.Type != stored.Type {
		m.Type, ch.Type = repeat.Type, repeat.Type
	}
	if len(repeat.Metadata) > 0 {
		merged, keys, err := mergeMetadata(stored.Metadata, repeat.Metadata)
		if err != nil {
			return nil, ch, err
		}
		if len(keys) > 0 {
			m.Metadata, ch.Metadata = merged, keys
		}
	}
	for _, f := range []struct {
		name      string
		old, new_ string
	}{
		{"name", stored.Name, repeat.Name}, {"description", stored.Description, repeat.Description},
		{"source", stored.Source, repeat.Source}, {"scene", stored.Scene, repeat.Scene},
		{"speaker", stored.Speaker, repeat.Speaker}, {"supersedes", stored.Supersedes, repeat.Supersedes},
	} {
		if f.new_ != "" && f.new_ != f.old {
			ch.Kept = append(ch.Kept, f.name)
		}
	}
	if !repeat.OccurredAt.IsZero() && !repeat.OccurredAt.Equal(repeat.CreatedAt) && !repeat.OccurredAt.Equal(stored.OccurredAt) {
		ch.Kept = append(ch.Kept, "occurred_at")
	}
	if !ch.Changed() {
		return nil, ch, nil
	}
	m.Scope = maps2(stored.Scope)
	m.UpdatedAt = now.UTC()
	return &m, ch, nil
}

// mergeMetadata overlays the keys of add on base (both JSON objects, or
// empty) and returns the result (keys sorted) and the keys whose value was
// added or changed, sorted; none when add brings nothing new.
func mergeMetadata(base, add json.RawMessage) (json.RawMessage, []string, error) {
	var b, a map[string]json.RawMessage
	if len(bytes.TrimSpace(base)) > 0 {
		if err := json.Unmarshal(base, &b); err != nil {
			return nil, nil, fmt.Errorf("stored metadata: %w", err)
		}
	}
	if err := json.Unmarshal(add, &a); err != nil {
		return nil, nil, fmt.Errorf("%w: field \"metadata\": %v", ErrInvalid, err)
	}
	if b == nil {
		b = map[string]json.RawMessage{}
	}
	var keys []string
	for k, v := range a {
		if old, ok := b[k]; ok && jsonEqual(old, v) {
			continue
		}
		b[k] = v
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, nil, nil
	}
	slices.Sort(keys)
	out, err := json.Marshal(b)
	if err != nil {
		return nil, nil, err
	}
	return out, keys, nil
}

// jsonEqual reports whether two JSON values are equal once compacted.
func jsonEqual(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

func maps2(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
