package eval

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
)

// Anchor is a published result shown beside ours for comparison.
type Anchor struct {
	// Dataset is the Dataset.Name it compares with ("scifact", "locomo-session").
	Dataset string `json:"dataset"`
	Name    string `json:"name"`
	// Metrics holds the published values under our metric names.
	Metrics map[string]float64 `json:"metrics"`
	// Source says where the numbers come from and how they differ from our setup.
	Source string `json:"source"`
}

//go:embed anchors.json
var anchorsJSON []byte

// PublishedAnchors returns the anchors checked in with the package (anchors.json):
// the published numbers the data README lists.
func PublishedAnchors() []Anchor {
	a, err := ReadAnchors(bytes.NewReader(anchorsJSON))
	if err != nil {
		// anchors.json is part of the build and tested; this cannot happen.
		return nil
	}
	return a
}

// LoadAnchors reads anchors from a JSON file: a list of Anchor objects.
func LoadAnchors(path string) ([]Anchor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open anchors: %w", err)
	}
	defer f.Close()
	a, err := ReadAnchors(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// ReadAnchors decodes and checks a JSON list of anchors: each names its data set
// and itself, and every value is a known metric in [0, 1].
func ReadAnchors(r io.Reader) ([]Anchor, error) {
	var out []Anchor
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("decode anchors: %w", err)
	}
	for i, a := range out {
		if strings.TrimSpace(a.Dataset) == "" || strings.TrimSpace(a.Name) == "" {
			return nil, fmt.Errorf("anchor %d: dataset and name are required", i+1)
		}
		if len(a.Metrics) == 0 {
			return nil, fmt.Errorf("anchor %d (%s): no metrics", i+1, a.Name)
		}
		for k, v := range a.Metrics {
			if !slices.Contains(AllMetrics, k) {
				return nil, fmt.Errorf("anchor %d (%s): unknown metric %q", i+1, a.Name, k)
			}
			if math.IsNaN(v) || v < 0 || v > 1 {
				return nil, fmt.Errorf("anchor %d (%s): %s = %v, want a value in [0, 1]", i+1, a.Name, k, v)
			}
		}
	}
	return out, nil
}

// AnchorsFor returns the anchors for one data set, in their given order.
func AnchorsFor(all []Anchor, dataset string) []Anchor {
	var out []Anchor
	for _, a := range all {
		if a.Dataset == dataset {
			out = append(out, a)
		}
	}
	return out
}
