package memory

import "time"

// Filter restricts a search, a brief or a listing. Every set field must hold;
// the zero Filter matches everything. Recall applies it inside each leg, before
// ranking, so a small scope in a large store still gets its full result count.
type Filter struct {
	// Scope: the memory's scope must contain every key=value given here.
	Scope map[string]string `json:"scope,omitempty"`
	Type  string            `json:"type,omitempty"`
	Scene string            `json:"scene,omitempty"`
	// Tags: the memory must carry every tag given here.
	Tags   []string `json:"tags,omitempty"`
	Source string   `json:"source,omitempty"`
	// Since and Until bound created_at: Since inclusive, Until exclusive.
	Since *time.Time `json:"since,omitempty"`
	Until *time.Time `json:"until,omitempty"`
	// Episode keeps the memories of one episode (in any scope the filter
	// admits).
	Episode string `json:"episode,omitempty"`
	// Supersedes keeps the memories that supersede the memory with this id.
	Supersedes string `json:"supersedes,omitempty"`
	// AsOf keeps what was current at that time: memories that had occurred
	// by then and that no memory occurred by then supersedes.
	AsOf *time.Time `json:"as_of,omitempty"`
	// Current leaves out every memory another memory supersedes, whenever
	// that occurred (a search's default; AsOf takes its place when given).
	Current bool `json:"-"`
}

// Empty reports whether the filter matches everything.
func (f *Filter) Empty() bool {
	return len(f.Scope) == 0 && f.Type == "" && f.Scene == "" && len(f.Tags) == 0 &&
		f.Source == "" && f.Since == nil && f.Until == nil && f.Episode == "" && f.Supersedes == "" &&
		f.AsOf == nil && !f.Current
}

// Match is the reference implementation of the filter over one memory. Current
// and AsOf read the memory's derived Superseded, which the backend fills.
// Indexes
// use faster equivalents and are tested against it.
func (f *Filter) Match(m *Memory) bool {
	for k, v := range f.Scope {
		if m.Scope[k] != v {
			return false
		}
	}
	if f.Type != "" && m.Type != f.Type {
		return false
	}
	if f.Scene != "" && m.Scene != f.Scene {
		return false
	}
	if f.Source != "" && m.Source != f.Source {
		return false
	}
	for _, t := range f.Tags {
		found := false
		for _, mt := range m.Tags {
			if mt == t {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if f.Since != nil && m.CreatedAt.Before(*f.Since) {
		return false
	}
	if f.Until != nil && !m.CreatedAt.Before(*f.Until) {
		return false
	}
	if f.Episode != "" && m.Episode != f.Episode {
		return false
	}
	if f.Supersedes != "" && m.Supersedes != f.Supersedes {
		return false
	}
	switch {
	case f.AsOf != nil:
		return m.Current(f.AsOf)
	case f.Current:
		return m.Current(nil)
	}
	return true
}

// Validate checks the filter's scope and that its times lie within the range
// a store holds (MinTime to MaxTime).
func (f *Filter) Validate() error {
	if err := ValidateScope(f.Scope); err != nil {
		return err
	}
	if err := CheckEpisode(f.Episode); err != nil {
		return err
	}
	for _, t := range []struct {
		name string
		t    *time.Time
	}{{"since", f.Since}, {"until", f.Until}, {"as_of", f.AsOf}} {
		if t.t != nil {
			if err := CheckTime(t.name, *t.t); err != nil {
				return err
			}
		}
	}
	return nil
}
