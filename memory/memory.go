// Package memory holds Engram's domain nouns: a Memory, the Filter that scopes a
// search, the Query that asks for one, and the Response that explains it. Every
// other package (storage, indexes, the recall pipeline, servers) speaks these types.
package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// DefaultType is the type given to a memory that names none.
const DefaultType = "note"

// DemandHalfLife is how fast a memory's demand (its decayed count of uses) fades.
const DemandHalfLife = 30 * 24 * time.Hour

// Memory is one thing an agent remembers.
type Memory struct {
	ID          string            `json:"id"`
	Name        string            `json:"name,omitempty"`
	Description string            `json:"description,omitempty"`
	Text        string            `json:"text"`
	Type        string            `json:"type"`
	Scene       string            `json:"scene,omitempty"`
	Scope       map[string]string `json:"scope,omitempty"`
	Tags        []string          `json:"tags,omitempty"`
	Source      string            `json:"source,omitempty"`
	Metadata    json.RawMessage   `json:"metadata,omitempty"`
	Favorite    bool              `json:"favorite,omitempty"`
	// Episode is the conversation, session or task the memory belongs to,
	// inside its scope, and Seq its position there (0: none; an episode's
	// memories are ordered by seq, then occurred_at, then id). See episode.go.
	Episode string `json:"episode,omitempty"`
	Seq     int64  `json:"seq,omitempty"`
	// Speaker is who said or wrote it: "user", "assistant", a name.
	Speaker string `json:"speaker,omitempty"`
	// OccurredAt is when it happened or was said; it defaults to CreatedAt.
	OccurredAt time.Time `json:"occurred_at,omitzero"`
	// Supersedes names the memory (by id, in this memory's own scope) that
	// this one replaces as the current truth: searches leave the superseded
	// one out unless asked as of an earlier time. Nothing is deleted.
	Supersedes string `json:"supersedes,omitempty"`
	// CreatedAt and UpdatedAt are set when the memory is stored (a zero time
	// means "now"). A memory not yet stored leaves them out of its JSON: the
	// zero instant written out is refused on input, as a time no store holds.
	CreatedAt time.Time `json:"created_at,omitzero"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	// Uses counts the deliveries that were relevant (a search result or an
	// injection that cleared the model's relevance bar) and the touches.
	Uses int64 `json:"uses,omitempty"`
	// Demand is the decayed count of uses as of DemandAt (half-life DemandHalfLife).
	Demand   float64    `json:"demand,omitempty"`
	DemandAt *time.Time `json:"demand_at,omitempty"`
	// ContentHash is ContentHash(name, description, text): what an embedding depends on.
	ContentHash string `json:"content_hash,omitempty"`
	// Embedding is the stored vector, or nil when the memory has not been embedded.
	Embedding *Embedding `json:"embedding,omitempty"`

	// Superseded is derived, never stored or exported: the memory of the
	// same scope that supersedes this one, when one does. A backend fills it
	// on the memories its searches and listings return.
	Superseded *Supersession `json:"-"`
}

// Supersession is the memory By (an id in the superseded memory's scope)
// that supersedes another, and its OccurredAt: from then on the other is no
// longer current. When several supersede one memory, the earliest to occur
// (then the smallest id) is the one named.
type Supersession struct {
	By string
	At time.Time
}

// Embedding is a stored vector with the model that produced it. A listing
// or a get without the vector names the model and dimension only.
type Embedding struct {
	Model  string    `json:"model"`
	Dim    int       `json:"dim"`
	Vector []float32 `json:"vector,omitempty"`
}

// EmbedText is the text an embedder sees for a memory: its name, description and
// text, one per line, skipping empty ones; a memory with a speaker has its text
// as "Speaker: text" (measured on LoCoMo: the vector leg finds a turn by who
// said it, any@5 0.28 without the speaker, 0.44 with it).
func (m *Memory) EmbedText() string {
	parts := make([]string, 0, 3)
	text := m.Text
	if m.Speaker != "" {
		text = m.Speaker + ": " + text
	}
	for _, s := range []string{m.Name, m.Description, text} {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}

// ComputeHash returns the content hash of a memory's embeddable text.
func (m *Memory) ComputeHash() string { return ContentHash(m.EmbedText()) }

// ContentHash is the first 128 bits of s's SHA-256 in hex: the key of the
// embedding cache.
func ContentHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:16])
}

// DemandNow returns the memory's demand decayed to time now.
func (m *Memory) DemandNow(now time.Time) float64 {
	if m.Demand <= 0 || m.DemandAt == nil {
		return 0
	}
	return Decay(m.Demand, now.Sub(*m.DemandAt))
}

// Decay fades a demand value over the elapsed time with half-life DemandHalfLife.
func Decay(d float64, elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return d
	}
	return d * math.Exp2(-float64(elapsed)/float64(DemandHalfLife))
}

// Validation errors. Each is wrapped with the offending field.
var (
	ErrInvalid  = errors.New("invalid")
	ErrNotFound = errors.New("not found")
)

// Normalize fills defaults (type) and canonicalises tags (trimmed, sorted, unique)
// and validates the fields. It does not set ids or times.
func (m *Memory) Normalize() error {
	if strings.TrimSpace(m.Text) == "" {
		return fmt.Errorf("%w: field \"text\" is required and must not be empty", ErrInvalid)
	}
	if m.Type = strings.TrimSpace(m.Type); m.Type == "" {
		m.Type = DefaultType
	}
	if err := ValidateScope(m.Scope); err != nil {
		return err
	}
	if err := m.normalizeEpisode(); err != nil {
		return err
	}
	m.Tags = NormalizeTags(m.Tags)
	if len(m.Metadata) > 0 {
		if !json.Valid(m.Metadata) || strings.TrimSpace(string(m.Metadata))[0] != '{' {
			return fmt.Errorf("%w: field \"metadata\" must be a JSON object", ErrInvalid)
		}
	}
	return nil
}

// NormalizeTags trims, drops empty, sorts and de-duplicates tags.
func NormalizeTags(tags []string) []string {
	if len(tags) == 0 {
		return nil
	}
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	j := 0
	for i, t := range out {
		if i == 0 || t != out[j-1] {
			out[j] = t
			j++
		}
	}
	if j == 0 {
		return nil
	}
	return out[:j]
}

// MaxIDLength bounds a memory id.
const MaxIDLength = 128

// CheckID refuses an id that is too long or holds whitespace, control or
// invalid characters.
func CheckID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty id", ErrInvalid)
	}
	if len(id) > MaxIDLength {
		return fmt.Errorf("%w: id of %d bytes is longer than %d", ErrInvalid, len(id), MaxIDLength)
	}
	for _, r := range id {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar {
			return fmt.Errorf("%w: id %q has whitespace, control or invalid characters", ErrInvalid, id)
		}
	}
	return nil
}

// ValidateScope checks every key and value of a scope map: non-empty, no
// ',' (nor '=' in a key), and no control characters, invalid UTF-8 or
// surrounding whitespace, which one path would trim and another keep, so
// that "a " and "a" would name one tenant on one path and two on the other.
// It is the rule for every scope given (memories, filters, views, keys);
// rows stored before it are read by CheckStoredScope.
func ValidateScope(scope map[string]string) error {
	for k, v := range scope {
		if err := checkScopePart(k, v); err != nil {
			return err
		}
		if err := checkScopeText(k, v); err != nil {
			return err
		}
	}
	return nil
}

// CheckStoredScope is the rule scopes were held to before ValidateScope
// refused surrounding whitespace and control characters: what a stored row
// may carry and still be read (and so listed, moved and deleted).
func CheckStoredScope(scope map[string]string) error {
	for k, v := range scope {
		if err := checkScopePart(k, v); err != nil {
			return err
		}
	}
	return nil
}

func checkScopePart(k, v string) error {
	if k == "" || strings.ContainsAny(k, "=,") || strings.TrimSpace(k) != k {
		return fmt.Errorf("%w: scope key %q: must be non-empty without '=', ',' or surrounding spaces", ErrInvalid, k)
	}
	if v == "" || strings.Contains(v, ",") {
		return fmt.Errorf("%w: scope %s=%q: value must be non-empty without ','", ErrInvalid, k, v)
	}
	return nil
}

// checkScopeText refuses what a key or value must not hold beyond
// checkScopePart's rule: invalid UTF-8, control characters, surrounding
// whitespace (Unicode's, as strings.TrimSpace sees it).
func checkScopeText(k, v string) error {
	for _, p := range []struct{ what, s string }{{"key", k}, {"value", v}} {
		why := ""
		switch {
		case !utf8.ValidString(p.s):
			why = "is not valid UTF-8"
		case strings.IndexFunc(p.s, unicode.IsControl) >= 0:
			why = "holds a control character"
		case strings.TrimSpace(p.s) != p.s:
			why = "has surrounding whitespace (refused, not trimmed)"
		default:
			continue
		}
		if p.what == "key" {
			return fmt.Errorf("%w: scope key %q %s", ErrInvalid, k, why)
		}
		return fmt.Errorf("%w: scope %s=%q: the value %s", ErrInvalid, k, v, why)
	}
	return nil
}

// ParseScope parses "key=value" pairs, given as separate arguments and/or joined
// by commas ("team=t1,user=u7"), into a scope map. Nothing is trimmed: a
// key or value with surrounding whitespace is refused, as ValidateScope
// refuses it in JSON (empty parts between commas are skipped).
func ParseScope(parts ...string) (map[string]string, error) {
	var scope map[string]string
	for _, p := range parts {
		for _, kv := range strings.Split(p, ",") {
			if kv == "" {
				continue
			}
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return nil, fmt.Errorf("%w: scope %q: want key=value", ErrInvalid, kv)
			}
			if err := checkScopePart(k, v); err != nil {
				return nil, err
			}
			if err := checkScopeText(k, v); err != nil {
				return nil, err
			}
			if scope == nil {
				scope = map[string]string{}
			}
			if old, dup := scope[k]; dup && old != v {
				return nil, fmt.Errorf("%w: scope key %q given twice (%q and %q)", ErrInvalid, k, old, v)
			}
			scope[k] = v
		}
	}
	return scope, nil
}

// FormatScope renders a scope as sorted "k=v,k=v".
func FormatScope(scope map[string]string) string {
	keys := make([]string, 0, len(scope))
	for k := range scope {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + scope[k])
	}
	return b.String()
}
