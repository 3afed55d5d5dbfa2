package ann

// Bytes estimates the graph's memory: its slices' capacities, the upper
// layers' lists and the tombstones' codes, with map entries at their share of
// the table.
func (g *Graph) Bytes() int64 {
	n := 4*int64(cap(g.docOf)+cap(g.nodeOf)) + int64(cap(g.level)) +
		4*int64(cap(g.links0)+cap(g.sims0)) + int64(cap(g.cnt0)) + 8*int64(cap(g.dead))
	for _, ls := range g.upper {
		n += mapEntry + 24*int64(cap(ls))
		for _, l := range ls {
			n += 4 * int64(cap(l.links)+cap(l.sims))
		}
	}
	for _, d := range g.deadCodes {
		n += mapEntry + int64(cap(d.codes))
	}
	return n
}

// mapEntry is what a map entry costs beyond its key and value's own memory.
const mapEntry = 40
