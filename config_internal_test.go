package engram

import (
	"slices"
	"strings"
	"testing"

	"github.com/engram-memory/engram/embed/builtin"
	"github.com/engram-memory/engram/internal/calibrate"
)

// TestModelWeightsCalibrated: calibrate's default sweep tries every model's
// default weight, so keeping the default is always one of its choices.
func TestModelWeightsCalibrated(t *testing.T) {
	for _, d := range append(modelDefaults, struct {
		prefix string
		ModelDefault
	}{"(unknown)", unknownModel}) {
		if !slices.Contains(calibrate.DefaultWeights, d.VectorWeight) {
			t.Errorf("model %s: default weight %g is not in calibrate.DefaultWeights %v", d.prefix, d.VectorWeight, calibrate.DefaultWeights)
		}
	}
}

// TestBuiltinModelDefaults: every built-in model has its own line in
// modelDefaults (measured, or marked as an assumption), not unknownModel's.
func TestBuiltinModelDefaults(t *testing.T) {
	ms, err := builtin.Models()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		found := false
		for _, d := range modelDefaults {
			found = found || strings.HasPrefix(m.ID, d.prefix)
		}
		if !found {
			t.Errorf("built-in %s (%s) has no modelDefaults line", m.Name, m.ID)
		}
	}
}
