package memory

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// Bounds on what a memory holds. Stores keep times as Unix nanoseconds (which
// cover 1677-09-21 to 2262-04-11) and counters as 64-bit integers; values
// outside these bounds are refused on input instead of wrapping or poisoning a
// column, and counting saturates at the top.
const (
	// MaxUses is the largest use count: 2^53, the last integer every JSON
	// reader (a float64) still counts exactly.
	MaxUses = 1 << 53
	// MaxDemand is the largest demand, a decayed count of uses.
	MaxDemand = float64(MaxUses)
)

// MinTime and MaxTime bound every time a memory carries, inclusive: whole
// years inside the range a Unix-nanosecond timestamp can hold.
var (
	MinTime = time.Date(1678, 1, 1, 0, 0, 0, 0, time.UTC)
	MaxTime = time.Date(2261, 12, 31, 23, 59, 59, 999999999, time.UTC)
)

// CheckTime refuses a time outside [MinTime, MaxTime], naming the field.
func CheckTime(field string, t time.Time) error {
	if t.Before(MinTime) || t.After(MaxTime) {
		return fmt.Errorf("%w: field %q: %s is outside the years 1678 to 2261 a store can hold", ErrInvalid, field, t.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// CheckStored validates what Normalize leaves to the caller, once ids and
// times are filled: every time in range, the use counters in range, and a
// given vector finite and non-zero (a zero vector has no direction, so the
// memory could never be found by it).
func (m *Memory) CheckStored() error {
	if err := CheckTime("created_at", m.CreatedAt); err != nil {
		return err
	}
	if err := CheckTime("updated_at", m.UpdatedAt); err != nil {
		return err
	}
	if err := CheckTime("occurred_at", m.OccurredAt); err != nil {
		return err
	}
	if m.DemandAt != nil {
		if err := CheckTime("demand_at", *m.DemandAt); err != nil {
			return err
		}
	}
	if m.Uses < 0 || m.Uses > MaxUses {
		return fmt.Errorf("%w: field \"uses\": %d is outside 0 to %d", ErrInvalid, m.Uses, int64(MaxUses))
	}
	if !(m.Demand >= 0 && m.Demand <= MaxDemand) { // false for NaN
		return fmt.Errorf("%w: field \"demand\": %v is outside 0 to %g", ErrInvalid, m.Demand, MaxDemand)
	}
	if e := m.Embedding; e != nil {
		if err := CheckVector(e.Vector); err != nil {
			return fmt.Errorf("%w: field \"embedding\": %v", ErrInvalid, err)
		}
	}
	return nil
}

// CheckVector refuses a vector with a non-finite value or no non-zero one.
func CheckVector(v []float32) error {
	nonzero := false
	for i, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("value %d is %v", i, x)
		}
		if x != 0 {
			nonzero = true
		}
	}
	if len(v) > 0 && !nonzero {
		return fmt.Errorf("all %d values are zero", len(v))
	}
	return nil
}

// Use is the counters after one more use at now, from the stored uses and
// demand (as of at, nil for never): uses+1 and the demand decayed to now +1,
// both saturating at their maximum. Counters out of range (a damaged row) are
// read as the nearest valid value, so a use always stores valid ones.
func Use(uses int64, demand float64, at *time.Time, now time.Time) (int64, float64) {
	uses, demand = ClampUses(uses), ClampDemand(demand)
	if at != nil {
		demand = Decay(demand, now.Sub(*at))
	}
	return min(uses+1, MaxUses), min(demand+1, MaxDemand)
}

// ClampUses is a stored use count as a valid one.
func ClampUses(n int64) int64 { return min(max(n, 0), MaxUses) }

// ClampDemand is a stored demand as a valid one (NaN reads as 0).
func ClampDemand(d float64) float64 {
	if !(d > 0) {
		return 0
	}
	return min(d, MaxDemand)
}

// CheckZeroTimes refuses a memory object whose JSON gives a time as the zero
// instant (0001-01-01T00:00:00Z): decoded, it is indistinguishable from a time
// not given, which means "now", so it would be stored silently as something
// else. Other out-of-range times are refused by CheckStored. Malformed JSON is
// left to the decoder to describe.
func CheckZeroTimes(obj []byte) error {
	var probe struct {
		CreatedAt  *time.Time `json:"created_at"`
		UpdatedAt  *time.Time `json:"updated_at"`
		DemandAt   *time.Time `json:"demand_at"`
		OccurredAt *time.Time `json:"occurred_at"`
	}
	if json.Unmarshal(obj, &probe) != nil {
		return nil
	}
	for _, f := range []struct {
		name string
		t    *time.Time
	}{{"created_at", probe.CreatedAt}, {"updated_at", probe.UpdatedAt}, {"demand_at", probe.DemandAt}, {"occurred_at", probe.OccurredAt}} {
		if f.t != nil && f.t.IsZero() {
			return CheckTime(f.name, *f.t)
		}
	}
	return nil
}
