package linalg

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Parallelism. Products big enough to pay for waking another goroutine are
// cut into chunks; the caller and any idle worker goroutines take chunks
// until none are left. Workers are started on first use, one fewer than the
// CPUs, and never exit; a worker that is busy (another goroutine's product)
// is simply not asked, so concurrent callers never wait on each other.
//
// A parked worker is slow to wake where an idle CPU halts, as a virtual
// machine's does: 60 µs from a channel send to the worker running, on the
// 2-core VMs this project is measured on, about half of one of a short
// query's products, so the second core did little of a query's work. Hold
// keeps idle workers spinning for the next product instead (a hand-over then
// takes well under a microsecond), while a caller has a run of products to
// do: a forward pass of an encoder.

// chunksPerThread chunks per thread balance a core slowed by other work.
const chunksPerThread = 4

// spinFor is how long a worker spins, under a Hold, after its last product
// before it parks: longer than the gap between two products of a forward
// pass (attention, a layer norm), short enough that a Hold whose caller does
// something else for a while costs that core little.
const spinFor = 300 * time.Microsecond

var (
	// parMinFlops is the smallest product (2·m·n·k) split across cores; a
	// variable so tests can push small products through the parallel path.
	parMinFlops = 1 << 20

	maxThreads atomic.Int64 // 0: GOMAXPROCS

	workerOnce sync.Once
	workerCh   chan job

	holds    atomic.Int64          // Holds not yet released
	spinning atomic.Int64          // workers spinning for an offer
	board    atomic.Pointer[offer] // the product offered to spinning workers, if any
)

// A job is work cut into chunks that goroutines take in turn: work takes
// chunks until none are left. Its crew counts the goroutines helping.
type job interface {
	work(ws *workspace)
	helping() *crew
}

// A crew is what a job needs to be shared (jobs embed one): the wait group
// of the parked workers that took it, and its offer to spinning ones.
type crew struct {
	wg    sync.WaitGroup
	offer offer
}

func (c *crew) helping() *crew { return c }

// An offer is a job posted on the board for up to left spinning workers to
// take. running counts the workers inside it: raised before a place is
// tried, so that once the caller has taken the places left, running falls
// to zero only when no worker can still touch the job. A job's offer is
// used again by its next product: a worker that read the board before and
// takes a place then works on that product, which the caller waits for.
type offer struct {
	j       job
	left    atomic.Int64
	running atomic.Int64
}

// take runs a place of the offer on ws, if one is left, and reports whether
// it did.
func (o *offer) take(ws *workspace) bool {
	o.running.Add(1)
	defer o.running.Add(-1)
	for {
		l := o.left.Load()
		if l <= 0 {
			return false
		}
		if o.left.CompareAndSwap(l, l-1) {
			o.j.work(ws)
			return true
		}
	}
}

// SetMaxThreads caps the goroutines one product may use (n ≤ 0 means
// GOMAXPROCS, the default) and returns the previous cap. Callers that
// already run one product per core can set 1.
func SetMaxThreads(n int) int {
	if n < 0 {
		n = 0
	}
	return int(maxThreads.Swap(int64(n)))
}

// Hold tells the workers that the caller has a run of products to do (an
// encoder's forward pass): until the returned function is called, a worker
// that finishes a product spins for the next instead of parking (for up to
// spinFor, yielding to any other goroutine that is ready to run). Holds
// nest and may overlap across goroutines; the function releases this one,
// once however often it is called. Where a product may use one goroutine
// only (GOMAXPROCS 1, SetMaxThreads(1)) Hold does nothing.
func Hold() (release func()) {
	if threadsAbove(2, 1) == 1 {
		return func() {} // one goroutine a product: no worker to keep
	}
	workerOnce.Do(startWorkers)
	if holds.Add(1) == 1 {
		// Parked workers start spinning now, while the caller prepares its
		// first product, not when it offers it.
		for range nworkers {
			select {
			case workerCh <- nop{}:
			default:
			}
		}
	}
	var once sync.Once
	return func() { once.Do(func() { holds.Add(-1) }) }
}

// nop is the job that wakes a parked worker to spin.
type nop struct{}

func (nop) work(*workspace) {}
func (nop) helping() *crew  { return nil }

// threadsFor is how many goroutines a job of flops floating-point
// operations should use.
func threadsFor(flops int) int {
	return threadsAbove(flops, parMinFlops)
}

// threadsAbove is how many goroutines a job of size should use: one per
// unit of size, at most GOMAXPROCS or the SetMaxThreads cap.
func threadsAbove(size, unit int) int {
	if size < unit {
		return 1
	}
	t := runtime.GOMAXPROCS(0)
	if c := int(maxThreads.Load()); c > 0 {
		t = min(t, c)
	}
	return max(1, min(t, size/unit))
}

// share runs j on the calling goroutine, with its workspace ws, and on up
// to helpers idle workers: posted on the board when workers spin, else sent
// to parked ones (a worker that stops spinning as j is posted leaves it to
// the caller). It returns once no other goroutine works on j.
func share(j job, helpers int, ws *workspace) {
	if helpers <= 0 {
		j.work(ws)
		return
	}
	workerOnce.Do(startWorkers)
	c := j.helping()
	if spinning.Load() > 0 {
		o := &c.offer
		o.j = j
		// Places are opened once the offer is up: a worker holding this
		// offer from its last product finds none while it is not.
		if board.CompareAndSwap(nil, o) {
			o.left.Store(int64(helpers))
			j.work(ws)
			// No place is taken after this; the workers inside finish
			// their chunks. Waited for spinning, not parked: waking this
			// goroutine again would cost what the offer saved.
			board.CompareAndSwap(o, nil)
			o.left.Store(0)
			for o.running.Load() > 0 {
				runtime.Gosched()
			}
			return
		}
		// Another caller's offer is up: ask parked workers.
	}
	for range helpers {
		c.wg.Add(1)
		select {
		case workerCh <- j:
			continue
		default:
			c.wg.Done()
		}
		break
	}
	j.work(ws)
	c.wg.Wait()
}

// nworkers is the number of worker goroutines, set once they start.
var nworkers int

func startWorkers() {
	workerCh = make(chan job)
	nworkers = max(runtime.NumCPU(), runtime.GOMAXPROCS(0)) - 1
	for range nworkers {
		go func() {
			ws := new(workspace)
			for j := range workerCh {
				j.work(ws)
				if c := j.helping(); c != nil {
					c.wg.Done()
				}
				spin(ws)
			}
		}()
	}
}

// spin takes the offers on the board while a Hold lasts, until none has
// come for spinFor.
func spin(ws *workspace) {
	spinning.Add(1)
	defer spinning.Add(-1)
	last := time.Now()
	for i := 0; holds.Load() > 0; i++ {
		if o := board.Load(); o != nil && o.take(ws) {
			last = time.Now()
			continue
		}
		if i%32 == 31 && time.Since(last) > spinFor {
			return
		}
		runtime.Gosched() // anything else ready to run goes first
	}
}

// Parallel calls fn at once on the calling goroutine and on up to n-1 idle
// workers, each call with a slot of its own in [0, n) (for its scratch
// space), and returns when every call has: the calls are expected to share
// one piece of work, taking its parts from a common counter, since a slot
// whose worker is busy is never called. The workers are the products'
// own, so under a Hold they are at hand, where a new goroutine would wait
// for a core to wake.
func Parallel(n int, fn func(slot int)) {
	if n <= 1 {
		fn(0)
		return
	}
	j := &funcJob{fn: fn, n: int64(n)}
	share(j, n-1, nil)
}

// funcJob is Parallel's job: each goroutine that runs it takes a slot.
type funcJob struct {
	crew
	fn   func(slot int)
	n    int64
	next atomic.Int64
}

func (j *funcJob) work(*workspace) {
	if s := j.next.Add(1) - 1; s < j.n {
		j.fn(int(s))
	}
}
