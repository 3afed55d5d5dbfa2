package recall

import (
	"github.com/engram-memory/engram/internal/datephrase"
	"github.com/engram-memory/engram/memory"
)

// Dates in queries. A query that names a time ("on 9 February, 2023", "in May
// 2023", "last week", "去年") is read by a deterministic parser, relative to
// the query's reference time (Query.Now, else the clock), into windows of
// time. Memories that occurred inside one are searched for inside each leg
// (backend.LegQuery.Windows) and their fused score is multiplied by the
// time boost; no memory is hidden (hard bounds are since and until). The
// response says which phrase was read as which window.

// maxWindows bounds the windows one query contributes: a text naming more
// dates than this is a list, not a question about a time.
const maxWindows = 4

// readDates fills the response's time windows from the query text.
func (r *run) readDates() {
	boost := r.s.TimeBoost
	if boost == 0 {
		boost = DefaultTimeBoost
	}
	if r.q.NoDates || !(boost > 1) {
		return
	}
	boost = min(boost, MaxTimeBoost)
	now := r.now()
	if r.q.Now != nil {
		now = *r.q.Now
	}
	for _, w := range datephrase.Find(r.window, now) {
		if len(r.resp.Time) == maxWindows {
			break
		}
		since, until := w.Since.UTC(), w.Until.UTC()
		if since.Before(memory.MinTime) || until.After(memory.MaxTime) || !since.Before(until) {
			continue
		}
		r.resp.Time = append(r.resp.Time, memory.TimeWindow{Phrase: w.Phrase, Since: since, Until: until, Boost: boost})
	}
}
