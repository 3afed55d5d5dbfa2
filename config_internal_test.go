package engram

import (
	"slices"
	"testing"

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
