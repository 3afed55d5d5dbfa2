package ann

// Snapshots: the graph written to and read back from a binenc stream, so a
// store opens without rebuilding it. The codes are not written (the vector
// index's snapshot holds them), except the tombstones' private copies. The
// reader checks every link, level and count before trusting them, and
// Check verifies that the graph covers exactly the vector index it will walk.

import (
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/engram-memory/engram/internal/binenc"
)

// snapshotVersion changes whenever the layout below does.
const snapshotVersion = 1

// WriteSnapshot writes the graph to w. The caller holds at least a read lock.
func (g *Graph) WriteSnapshot(w *binenc.Writer) {
	w.Uint32(snapshotVersion)
	w.Uint64(uint64(g.dim))
	w.Uint64(uint64(g.p.M))
	w.Uint64(uint64(g.p.EfConstruction))
	w.Int64(int64(g.entry))
	w.Uint32s(g.docOf)
	w.Int8s(bytesAsInt8(g.level))
	w.Int8s(bytesAsInt8(g.cnt0))
	w.Uint32s(g.links0)
	w.Float32s(g.sims0)
	nodes := make([]uint32, 0, len(g.upper))
	for n := range g.upper {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	w.Uint64(uint64(len(nodes)))
	for _, n := range nodes {
		w.Uint32(n)
		for _, ll := range g.upper[n] {
			w.Uint32s(ll.links)
			w.Float32s(ll.sims)
		}
	}
	dead := make([]uint32, 0, len(g.deadCodes))
	for n := range g.deadCodes {
		dead = append(dead, n)
	}
	slices.Sort(dead)
	w.Uint64(uint64(len(dead)))
	for _, n := range dead {
		d := g.deadCodes[n]
		w.Uint32(n)
		w.Float32(d.scale)
		w.Int8s(d.codes)
	}
}

func bytesAsInt8(b []uint8) []int8 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*int8)(unsafe.Pointer(&b[0])), len(b))
}

func int8AsBytes(b []int8) []uint8 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*uint8)(unsafe.Pointer(&b[0])), len(b))
}

// ReadSnapshot reads a graph written by WriteSnapshot whose document numbers
// are all below docs (the owner's slot count, itself bounded by its input),
// so that a corrupt one cannot make it allocate a huge doc→node table.
// Inconsistent input is an error, recorded in r and returned; a graph it
// returns has every link in range and every count within bounds, so no
// search over it can fail.
func ReadSnapshot(r *binenc.Reader, docs int) (*Graph, error) {
	fail := func(format string, args ...any) (*Graph, error) {
		r.Corruptf("ann snapshot: "+format, args...)
		return nil, r.Err()
	}
	if v := r.Uint32(); r.Err() == nil && v != snapshotVersion {
		return fail("version %d, want %d", v, snapshotVersion)
	}
	dim, m, efc, entry := r.Uint64(), r.Uint64(), r.Uint64(), r.Int64()
	if r.Err() != nil {
		return nil, r.Err()
	}
	if dim < 1 || dim > 1<<20 || m < 2 || m > 127 || efc < 1 || efc > 1<<20 {
		return fail("dimension %d, M %d, efConstruction %d", dim, m, efc)
	}
	g := New(int(dim), Params{M: int(m), EfConstruction: int(efc)})
	g.docOf = r.Uint32s()
	nodes := len(g.docOf)
	g.level = int8AsBytes(r.Int8s())
	g.cnt0 = int8AsBytes(r.Int8s())
	if r.Err() == nil && (len(g.level) != nodes || len(g.cnt0) != nodes) {
		return fail("%d nodes but %d levels and %d counts", nodes, len(g.level), len(g.cnt0))
	}
	if r.Err() == nil && uint64(nodes)*uint64(g.m0)*4 > uint64(r.Remaining()) {
		return fail("%d nodes of %d links do not fit", nodes, g.m0)
	}
	g.links0 = r.Uint32s()
	g.sims0 = r.Float32s()
	if r.Err() != nil {
		return nil, r.Err()
	}
	if len(g.links0) != nodes*g.m0 || len(g.sims0) != nodes*g.m0 {
		return fail("%d nodes but %d/%d layer-0 slots", nodes, len(g.links0), len(g.sims0))
	}
	if nodes == 0 && entry != -1 || nodes > 0 && (entry < 0 || entry >= int64(nodes)) {
		return fail("entry %d of %d nodes", entry, nodes)
	}
	g.entry = int32(entry)
	for n := range nodes {
		if int(g.level[n]) > maxLevel || int(g.cnt0[n]) > g.m0 {
			return fail("node %d: level %d, %d links", n, g.level[n], g.cnt0[n])
		}
		if err := checkLinks(g.links0[n*g.m0:n*g.m0+int(g.cnt0[n])], g.sims0[n*g.m0:n*g.m0+int(g.cnt0[n])], nodes); err != nil {
			return fail("node %d: %v", n, err)
		}
	}
	ups := r.Count(4)
	for range ups {
		n := r.Uint32()
		if r.Err() != nil {
			return nil, r.Err()
		}
		if int(n) >= nodes || g.level[n] == 0 || g.upper[n] != nil {
			return fail("upper layers for node %d", n)
		}
		ls := make([]layerLinks, g.level[n])
		for i := range ls {
			ls[i].links, ls[i].sims = r.Uint32s(), r.Float32s()
			if r.Err() != nil {
				return nil, r.Err()
			}
			if len(ls[i].links) > g.p.M || len(ls[i].sims) != len(ls[i].links) {
				return fail("node %d layer %d: %d links", n, i+1, len(ls[i].links))
			}
			if err := checkLinks(ls[i].links, ls[i].sims, nodes); err != nil {
				return fail("node %d layer %d: %v", n, i+1, err)
			}
			for _, e := range ls[i].links {
				if int(g.level[e]) < i+1 {
					return fail("node %d layer %d links node %d of level %d", n, i+1, e, g.level[e])
				}
			}
		}
		g.upper[n] = ls
	}
	top := 0
	for n := range nodes {
		if g.level[n] > 0 && g.upper[uint32(n)] == nil {
			return fail("node %d of level %d has no upper layers", n, g.level[n])
		}
		top = max(top, int(g.level[n]))
	}
	if nodes > 0 && int(g.level[g.entry]) != top {
		return fail("entry %d has level %d, the top is %d", g.entry, g.level[g.entry], top)
	}
	g.top = top
	g.dead = make([]uint64, (nodes+63)/64)
	deads := r.Count(4 + 4 + 8)
	for range deads {
		n, scale, codes := r.Uint32(), r.Float32(), r.Int8s()
		if r.Err() != nil {
			return nil, r.Err()
		}
		if int(n) >= nodes || g.isDead(n) || len(codes) != g.dim || !finite(scale) {
			return fail("tombstone %d", n)
		}
		g.dead[n>>6] |= 1 << (n & 63)
		g.deadCodes[n] = deadCode{codes: codes, scale: scale}
	}
	for n, d := range g.docOf {
		if g.isDead(uint32(n)) {
			continue
		}
		if int64(d) >= math.MaxInt32 || int64(d) >= int64(docs) {
			return fail("document number %d, the index has %d", d, docs)
		}
		if int(d) >= len(g.nodeOf) {
			g.nodeOf = append(g.nodeOf, make([]int32, int(d)+1-len(g.nodeOf))...)
		}
		if g.nodeOf[d] != 0 {
			return fail("document %d has two live nodes", d)
		}
		g.nodeOf[d] = int32(n) + 1
		g.live++
	}
	return g, r.Err()
}

func checkLinks(links []uint32, sims []float32, nodes int) error {
	for i, e := range links {
		if int(e) >= nodes {
			return fmt.Errorf("link to node %d of %d", e, nodes)
		}
		if !finite(sims[i]) {
			return fmt.Errorf("similarity %v", sims[i])
		}
	}
	return nil
}

func finite(f float32) bool { return !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) }

// Check verifies that the graph's live documents are exactly those src has a
// vector for (count docs of them), each with the graph's dimension: a graph
// written with one vector index and read against another is not trusted.
func (g *Graph) Check(src Source, docs int) error {
	if g.live != docs {
		return fmt.Errorf("ann: graph holds %d documents, the vector index %d", g.live, docs)
	}
	for n, d := range g.docOf {
		if g.isDead(uint32(n)) {
			continue
		}
		c, _, ok := src.Code(d)
		if !ok || len(c) != g.dim {
			return fmt.Errorf("ann: graph node %d is document %d, which has no vector of %d", n, d, g.dim)
		}
	}
	return nil
}
