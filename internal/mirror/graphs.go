package mirror

// Building ANN graphs in the background. The index asks for a graph when a
// model reaches the threshold, after a rebuild from the rows, or when
// tombstones pile up (index.WantsGraphs); the mirror then copies the codes
// under the write lock, builds the graph on its own goroutine without any
// lock while searches go on exactly and writes go on as usual, installs it
// under the write lock (applying the writes made meanwhile), and writes a
// snapshot so the next open reads the graph instead of building it.

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/engram-memory/engram/internal/index"
)

// graphWork is the mirror's background graph build, if one runs.
type graphWork struct {
	mu     sync.Mutex // guards cancel, done and closed
	cancel context.CancelFunc
	done   chan struct{} // closed when the running build ends; nil when none runs
	closed bool          // Close was called: start no build
	// snapshotDue: a graph was installed that no snapshot holds yet.
	snapshotDue atomic.Bool
}

// maybeBuildGraphs starts a background build when the index wants a graph
// and none is running. Cheap when nothing is wanted (a read lock).
func (m *Mirror) maybeBuildGraphs() {
	if m.st == nil {
		return // a fork builds its graphs itself
	}
	m.mu.RLock()
	want := m.ix.WantsGraphs()
	m.mu.RUnlock()
	if !want {
		return
	}
	m.mu.Lock()
	m.gw.mu.Lock()
	if m.gw.closed || m.gw.done != nil {
		m.gw.mu.Unlock()
		m.mu.Unlock()
		return // the running build's end looks again
	}
	builds := m.ix.PrepareGraphBuilds()
	m.mu.Unlock()
	if len(builds) == 0 {
		m.gw.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	m.gw.cancel, m.gw.done = cancel, done
	m.gw.mu.Unlock()
	go m.runGraphBuilds(ctx, builds, done)
}

func (m *Mirror) runGraphBuilds(ctx context.Context, builds []*index.GraphBuild, done chan struct{}) {
	installed := false
	for _, b := range builds {
		start := time.Now()
		err := b.Run(ctx, runtime.GOMAXPROCS(0))
		m.mu.Lock()
		if err != nil {
			m.ix.AbandonGraphBuild(b)
			m.log.Debug("ANN graph build stopped", "reason", err)
		} else {
			m.ix.InstallGraph(b)
			installed = true
			m.log.Debug("ANN graph built", "model", b.Model(), "vectors", b.Len(), "took", time.Since(start))
		}
		m.mu.Unlock()
	}
	if installed {
		m.gw.snapshotDue.Store(true)
		if ctx.Err() == nil {
			m.MaybeWriteSnapshot(ctx)
		}
	}
	m.gw.mu.Lock()
	m.gw.cancel, m.gw.done = nil, nil
	m.gw.mu.Unlock()
	close(done)
	if ctx.Err() == nil {
		m.maybeBuildGraphs() // wanted again meanwhile (tombstones, another model)
	}
}

// WaitGraphs waits until no background graph build runs, or ctx ends.
func (m *Mirror) WaitGraphs(ctx context.Context) error {
	for {
		m.gw.mu.Lock()
		done := m.gw.done
		m.gw.mu.Unlock()
		if done == nil {
			return nil
		}
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close stops a background graph build and waits for it to end; no build
// starts afterwards. The store's owner calls it before closing the store.
// A graph not yet built is built again by the next process that wants it.
func (m *Mirror) Close() {
	m.gw.mu.Lock()
	m.gw.closed = true
	cancel, done := m.gw.cancel, m.gw.done
	m.gw.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}
