package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/backend/sqlite"
	"github.com/engram-memory/engram/internal/index"
	"github.com/engram-memory/engram/internal/synth"
	"github.com/engram-memory/engram/memory"
)

func init() { register(newBench) }

// benchFlags are the options of engram bench.
type benchFlags struct {
	sizes, jsonOut, dir string
	cpuProfile          string
	dim, queries, batch int
	limit, annMin       int
	seed                uint64
	keep                bool
}

// maxBenchSize bounds --sizes: 10M memories of 512-d vectors need ~45 GB.
const maxBenchSize = 10_000_000

// benchModes are the search modes timed at every size.
var benchModes = []string{memory.ModeBM25, memory.ModeVector, memory.ModeHybrid}

func newBench(e *env) *cobra.Command {
	var f benchFlags
	c := &cobra.Command{
		Use:   "bench",
		Short: "Measure ingest, file size, open time, memory and search latency on synthetic stores",
		Long: `Build a synthetic store of each size (realistic memory texts from a Zipf-like
vocabulary with identifiers, clustered vectors from a cheap deterministic
embedder) and report: ingest rate, file size, open time (open the file until the
first search answers), resident memory (VmRSS, and the process peak VmHWM), and
search latency p50/p95/p99 per mode, per pipeline stage (timings_ms) and wall,
and recall@limit of the vector leg itself against an exact scan of the same
store (a second handle with the ANN graph off) at 100%, 10%, 1% and 0.1% of
the memories allowed by a tag filter, with both legs' wall time.
The table goes to stdout, progress to stderr; --json FILE writes the report.`,
		Example: `  engram bench --sizes 10k,100k
  engram bench --sizes 1m --queries 500 --json bench-1m.json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return e.runBench(cmd.Context(), f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.sizes, "sizes", "10k,100k", "store sizes, comma-separated, with optional k or m suffix (1m needs ~6 GB of RAM)")
	fl.IntVar(&f.annMin, "ann-min", 0, "vectors from which the vector leg keeps an ANN graph (0: the engine's default, -1: never)")
	fl.IntVar(&f.dim, "dim", synth.DefaultDim, "vector dimension")
	fl.IntVar(&f.queries, "queries", 200, "queries timed per mode and size")
	fl.IntVar(&f.batch, "batch", 5000, "memories added per transaction")
	fl.IntVar(&f.limit, "limit", 10, "results per search")
	fl.Uint64Var(&f.seed, "seed", synth.DefaultSeed, "corpus seed")
	fl.StringVar(&f.jsonOut, "json", "", "also write the report as JSON to this file (- for stdout instead of the table)")
	fl.StringVar(&f.dir, "dir", "", "directory for the store files (default a temporary one)")
	fl.BoolVar(&f.keep, "keep", false, "keep the store files (bench-N.db under --dir) and write the timed queries with their vectors beside them (queries-N.jsonl), for timing other engines on the same data (tools/peers)")
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of each size's timed searches to FILE-N (N the size), for go tool pprof")
	return c
}

// check validates the flags and parses the sizes.
func (f *benchFlags) check() ([]int, error) {
	sizes, err := parseSizes(f.sizes)
	switch {
	case err != nil:
		return nil, err
	case f.dim < 1 || f.dim > 8192:
		return nil, fmt.Errorf("bench: --dim %d: want 1–8192", f.dim)
	case f.queries < 1:
		return nil, fmt.Errorf("bench: --queries %d: want a positive number", f.queries)
	case f.batch < 1:
		return nil, fmt.Errorf("bench: --batch %d: want a positive number", f.batch)
	case f.limit < 1 || f.limit > 1000:
		return nil, fmt.Errorf("bench: --limit %d: want 1–1000", f.limit)
	case f.keep && f.dir == "":
		return nil, fmt.Errorf("bench: --keep needs --dir")
	}
	return sizes, nil
}

// parseSizes reads "10k,100k,1m": positive integers with an optional k (×1000)
// or m (×1,000,000) suffix.
func parseSizes(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		p := strings.ToLower(strings.TrimSpace(part))
		if p == "" {
			continue
		}
		mult := 1
		switch {
		case strings.HasSuffix(p, "k"):
			mult, p = 1000, strings.TrimSuffix(p, "k")
		case strings.HasSuffix(p, "m"):
			mult, p = 1_000_000, strings.TrimSuffix(p, "m")
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > maxBenchSize/mult {
			return nil, fmt.Errorf("bench: --sizes: %q: want a number from 1 to 10m, such as 10k or 1m", strings.TrimSpace(part))
		}
		out = append(out, n*mult)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("bench: --sizes: no sizes in %q", s)
	}
	return out, nil
}

func (e *env) runBench(ctx context.Context, f benchFlags) error {
	sizes, err := f.check()
	if err != nil {
		return usageError{err}
	}
	dir := f.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "engram-bench-"); err != nil {
			return fmt.Errorf("bench: temporary directory: %w", err)
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return usagef("bench: --dir: %v", err)
	}
	corpus := synth.New(synth.Config{Seed: f.seed, Dim: f.dim})
	rep := &benchReport{
		Dim: f.dim, Queries: f.queries, Limit: f.limit, Seed: f.seed, Embedder: corpus.ModelID(),
		GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(),
	}
	b := &bencher{corpus: corpus, f: f, progress: e.progress}
	for _, n := range sizes {
		path := filepath.Join(dir, fmt.Sprintf("bench-%d.db", n))
		res, err := b.size(ctx, path, n)
		if err != nil {
			return fmt.Errorf("bench %d: %w", n, err)
		}
		if !f.keep {
			removeStore(path)
		} else if err := writeFile(filepath.Join(dir, fmt.Sprintf("queries-%d.jsonl", n)), func(w io.Writer) error { return b.writeQueries(w, n) }); err != nil {
			return err
		}
		rep.Sizes = append(rep.Sizes, *res)
	}
	switch f.jsonOut {
	case "-":
		return rep.writeJSON(e.stdout)
	case "":
	default:
		if err := writeFile(f.jsonOut, rep.writeJSON); err != nil {
			return err
		}
	}
	return rep.writeTable(e.stdout)
}

// bencher runs the phases of one size.
type bencher struct {
	corpus   *synth.Corpus
	f        benchFlags
	progress func(total int, what string) func(n int)
}

func (b *bencher) options() engram.Options {
	return engram.Options{Embedder: b.corpus.Embedder(), SQLite: sqlite.Options{ANNMinVectors: b.f.annMin}}
}

// benchSelectivities are the tag filters recall is measured under: every
// memory i carries "sel10" when i%10 == 0, and so on, so each admits the
// share of the store its name says.
var benchSelectivities = []struct {
	Share float64
	Tag   string
	Every int
}{{1, "", 1}, {0.1, "sel10", 10}, {0.01, "sel1", 100}, {0.001, "sel01", 1000}}

// benchMemory is synthetic memory i with its selectivity tags.
func (b *bencher) memory(i int) *memory.Memory {
	m := b.corpus.Memory(i)
	for _, s := range benchSelectivities {
		if s.Tag != "" && i%s.Every == 0 {
			m.Tags = append(m.Tags, s.Tag)
		}
	}
	return m
}

// size builds a store of n memories at path and measures it.
func (b *bencher) size(ctx context.Context, path string, n int) (*benchSize, error) {
	removeStore(path)
	res := &benchSize{Memories: n}
	if err := b.ingest(ctx, path, n, res); err != nil {
		return nil, err
	}
	// Remove any index snapshot so that the first open measures the full
	// rebuild (which writes a new one).
	_ = os.Remove(sqlite.SnapshotPath(path))
	// Start the open from a clean heap: the ingesting store is closed and gone.
	runtime.GC()
	debug.FreeOSMemory()
	res.FileBytes = storeSize(path)

	q, _ := b.corpus.Query(0, n)
	open := func() (*engram.DB, float64, float64, error) {
		t0 := time.Now()
		db, err := engram.Open(ctx, path, b.options())
		if err == nil {
			err = db.Warm(ctx) // the index is built on first need: load it here, to time it apart
		}
		if err != nil {
			return nil, 0, 0, fmt.Errorf("reopen: %w", err)
		}
		load := time.Since(t0).Seconds()
		if _, err := db.Search(ctx, memory.Query{Query: q, Limit: b.f.limit, NoRecord: true}); err != nil {
			db.Close()
			return nil, 0, 0, fmt.Errorf("first search: %w", err)
		}
		return db, load, time.Since(t0).Seconds(), nil
	}
	db, load, first, err := open()
	if err != nil {
		return nil, err
	}
	res.LoadSeconds, res.OpenSeconds = load, first
	if _, err := os.Stat(sqlite.SnapshotPath(path)); err == nil {
		// The first open wrote an index snapshot: time the open that loads it,
		// from a clean heap again (what the rebuild left would count as RSS
		// until the runtime returns it).
		db.Close()
		runtime.GC()
		debug.FreeOSMemory()
		if db, _, res.SnapshotOpenSeconds, err = open(); err != nil {
			return nil, err
		}
	}
	defer db.Close()
	if got := db.Count(); got != n {
		return nil, fmt.Errorf("reopened store holds %d memories, want %d", got, n)
	}
	stop, err := b.profile(n)
	if err != nil {
		return nil, err
	}
	if err := b.search(ctx, db, n, res); err != nil {
		stop()
		return nil, err
	}
	stop()
	ps := procMemory()
	res.RSSBytes, res.HWMBytes, res.RSSAnonBytes, res.RSSFileBytes = ps.RSS, ps.HWM, ps.Anon, ps.File
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	res.HeapBytes = int64(ms.HeapAlloc)
	if fp, ok := db.Backend().(interface{ Footprint() index.Footprint }); ok {
		f := fp.Footprint()
		res.Footprint = &f
	}
	if st, err := os.Stat(sqlite.SnapshotPath(path)); err == nil {
		res.SnapshotBytes = st.Size()
	}
	if err := b.recall(ctx, path, n, res); err != nil {
		return nil, err
	}
	return res, nil
}

// profile starts a CPU profile of size n's searches when --cpuprofile asks
// for one; stop ends it.
func (b *bencher) profile(n int) (stop func(), err error) {
	if b.f.cpuProfile == "" {
		return func() {}, nil
	}
	path := fmt.Sprintf("%s-%d", b.f.cpuProfile, n)
	f, err := os.Create(path)
	if err != nil {
		return nil, usagef("bench: --cpuprofile: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("bench: CPU profile %s: %w", path, err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// recall measures the vector leg's recall@limit against an exact scan: the
// leg itself (backend.Searcher.Legs, no fusion or boosts, whose min-max
// normalisation would make the final list depend on the leg's tail) of the
// store as the engine opens it, with its ANN graph, and of a second backend
// on the same file that rebuilds its index from the rows with the graph off,
// with the same query vectors under each selectivity's filter. Both legs'
// wall times are recorded.
func (b *bencher) recall(ctx context.Context, path string, n int, res *benchSize) error {
	open := func(o sqlite.Options) (*sqlite.Backend, error) {
		be, err := sqlite.Open(ctx, path, o)
		if err == nil {
			err = be.Warm(ctx)
		}
		return be, err
	}
	ann, err := open(sqlite.Options{ANNMinVectors: b.f.annMin, SnapshotMinMemories: -1})
	if err != nil {
		return fmt.Errorf("open the store for recall: %w", err)
	}
	defer ann.Close()
	exact, err := open(sqlite.Options{ANNMinVectors: -1, NoSnapshot: true})
	if err != nil {
		return fmt.Errorf("open the exact reference: %w", err)
	}
	defer exact.Close()
	queries := min(b.f.queries, 100)
	step := b.progress(len(benchSelectivities)*queries, fmt.Sprintf("recall %d", n))
	for _, sel := range benchSelectivities {
		rr := benchRecall{Share: sel.Share}
		var exactMS, annMS []float64
		hit, total := 0, 0
		for i := range queries {
			text, _ := b.corpus.Query(i+1, n)
			q := backend.LegQuery{K: b.f.limit, Vector: b.corpus.Vector(text), Model: b.corpus.ModelID()}
			if sel.Tag != "" {
				q.Filter.Tags = []string{sel.Tag}
			}
			if q.Vector == nil {
				continue
			}
			t0 := time.Now()
			got, err := ann.Legs(ctx, q)
			annMS = append(annMS, float64(time.Since(t0).Nanoseconds())/1e6)
			if err != nil {
				return fmt.Errorf("recall search %q: %w", text, err)
			}
			t0 = time.Now()
			want, err := exact.Legs(ctx, q)
			exactMS = append(exactMS, float64(time.Since(t0).Nanoseconds())/1e6)
			if err != nil {
				return fmt.Errorf("exact search %q: %w", text, err)
			}
			keys := map[string]bool{}
			for _, h := range got.Vector {
				keys[h.Memory.Key()] = true
			}
			for _, h := range want.Vector {
				total++
				if keys[h.Memory.Key()] {
					hit++
				}
			}
			step(1)
		}
		rr.Recall = 1
		if total > 0 {
			rr.Recall = float64(hit) / float64(total)
		}
		rr.WallMS = percentiles(map[string][]float64{"wall": annMS})["wall"]
		rr.ExactWallMS = percentiles(map[string][]float64{"wall": exactMS})["wall"]
		res.Recall = append(res.Recall, rr)
	}
	return nil
}

// ingest adds n synthetic memories in batches, timing only the Add calls
// (embedding included, generating the text not).
func (b *bencher) ingest(ctx context.Context, path string, n int, res *benchSize) error {
	db, err := engram.Open(ctx, path, b.options())
	if err != nil {
		return err
	}
	step := b.progress(n, fmt.Sprintf("ingest %d", n))
	var spent time.Duration
	for lo := 0; lo < n; lo += b.f.batch {
		if err := ctx.Err(); err != nil {
			db.Close()
			return err
		}
		batch := make([]*memory.Memory, 0, min(b.f.batch, n-lo))
		for i := lo; i < min(lo+b.f.batch, n); i++ {
			batch = append(batch, b.memory(i))
		}
		t0 := time.Now()
		r, err := db.Add(ctx, batch...)
		spent += time.Since(t0)
		if err != nil {
			db.Close()
			return fmt.Errorf("add %d-%d: %w", lo+1, lo+len(batch), err)
		}
		if r.Deferred != "" {
			db.Close()
			return fmt.Errorf("add %d-%d: embedding deferred: %s", lo+1, lo+len(batch), r.Deferred)
		}
		step(len(batch))
	}
	res.RSSAfterIngestBytes = procMemory().RSS
	if err := db.Close(); err != nil {
		return fmt.Errorf("close after ingest: %w", err)
	}
	res.IngestSeconds = spent.Seconds()
	res.IngestPerSec = float64(n) / max(spent.Seconds(), 1e-9)
	return nil
}

// queries are the texts search times at size n.
func (b *bencher) queries(n int) []string {
	qs := make([]string, b.f.queries)
	for i := range qs {
		qs[i], _ = b.corpus.Query(i+1, n)
	}
	return qs
}

// writeQueries writes the queries search times at size n, a JSON object a
// line: the text and the synthetic embedder's vector of it.
func (b *bencher) writeQueries(w io.Writer, n int) error {
	enc := json.NewEncoder(w)
	for _, q := range b.queries(n) {
		if err := enc.Encode(struct {
			Query  string    `json:"query"`
			Vector []float32 `json:"vector"`
		}{q, b.corpus.Vector(q)}); err != nil {
			return err
		}
	}
	return nil
}

// search times every query under every mode, without recording uses.
func (b *bencher) search(ctx context.Context, db *engram.DB, n int, res *benchSize) error {
	queries := b.queries(n)
	step := b.progress(len(benchModes)*len(queries), fmt.Sprintf("search %d", n))
	for _, mode := range benchModes {
		samples := map[string][]float64{}
		strategies := map[string]int{}
		for _, q := range queries {
			t0 := time.Now()
			resp, err := db.Search(ctx, memory.Query{Query: q, Mode: mode, Limit: b.f.limit, NoRecord: true})
			wall := time.Since(t0)
			if err != nil {
				return fmt.Errorf("%s search %q: %w", mode, q, err)
			}
			for k, v := range resp.TimingsMS {
				samples[k] = append(samples[k], v)
			}
			samples["wall"] = append(samples["wall"], float64(wall.Nanoseconds())/1e6)
			strategies[resp.Strategy]++
			step(1)
		}
		res.Search = append(res.Search, benchMode{Mode: mode, Strategies: strategies, LatencyMS: percentiles(samples)})
	}
	return nil
}

// progress returns a step function for a phase of total units: a progress bar
// when stderr is a terminal, else a line when the phase starts and ends.
func (e *env) progress(total int, what string) func(n int) {
	if f, ok := e.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		bar := progressbar.NewOptions(total,
			progressbar.OptionSetWriter(e.stderr), progressbar.OptionSetDescription(what),
			progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		return func(n int) { _ = bar.Add(n) }
	}
	fmt.Fprintf(e.stderr, "bench: %s: %d to do\n", what, total)
	done, start := 0, time.Now()
	return func(n int) {
		if done += n; done >= total {
			fmt.Fprintf(e.stderr, "bench: %s: done in %s\n", what, time.Since(start).Round(time.Millisecond))
		}
	}
}

// storeSize is the size of the store file and its WAL.
func storeSize(path string) int64 {
	var n int64
	for _, p := range []string{path, path + "-wal"} {
		if st, err := os.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return n
}

// removeStore deletes a store file and its WAL and shared-memory files.
func removeStore(path string) {
	for _, p := range []string{path, path + "-wal", path + "-shm", sqlite.SnapshotPath(path)} {
		_ = os.Remove(p)
	}
}

// procStatus is the process's memory as /proc/self/status gives it.
type procStatus struct {
	RSS, HWM   int64 // VmRSS, VmHWM
	Anon, File int64 // RssAnon, RssFile: the process's own pages, and file pages it maps
}

// procMemory reads /proc/self/status; zeros where that file does not exist.
func procMemory() procStatus {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return procStatus{}
	}
	return parseProcStatus(string(data))
}

func parseProcStatus(s string) procStatus {
	var p procStatus
	for _, line := range strings.Split(s, "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(val)
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		switch key {
		case "VmRSS":
			p.RSS = kb * 1024
		case "VmHWM":
			p.HWM = kb * 1024
		case "RssAnon":
			p.Anon = kb * 1024
		case "RssFile":
			p.File = kb * 1024
		}
	}
	return p
}
