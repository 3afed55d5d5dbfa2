package weaviate

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/weaviatetest"
	"github.com/engram-memory/engram/memory"
)

// Bounds of TestClusterNodeLoss's phases. They bound waiting, not speed: a
// phase that reaches its count early ends early.
const (
	clusterPhase    = 3 * time.Minute // for each load phase to reach its count
	clusterCatchUp  = 5 * time.Minute // for the restarted node to hold every acknowledged write
	clusterBatch    = 20              // memories per write
	clusterTeams    = 3
	clusterVictim   = 3 // the node killed: writes go through node 1, searches through node 2
	clusterModel    = "cluster-test-v1"
	clusterVecDim   = 8
	clusterMinPuts  = 5 // acknowledged writes each phase waits for
	clusterMinReads = 5 // searches the down phase waits for
)

var clusterTeamNames = [clusterTeams]string{"red", "green", "blue"}

// clusterMem is memory n of team: its text names the team, so that a hit
// from another team shows in its text as in its scope.
func clusterMem(team string, n int) *memory.Memory {
	words := []string{"deploy", "rollback", "incident", "review", "migration"}
	return mem(fmt.Sprintf("%s-%05d", team, n), fmt.Sprintf("cluster note %d of team %s about the %s", n, team, words[n%len(words)]),
		func(m *memory.Memory) {
			m.Scope = map[string]string{"team": team}
			v := make([]float32, clusterVecDim)
			for i := range v {
				v[i] = float32(math.Sin(float64(n*(i+1)) + float64(len(team))))
			}
			m.Embedding = &memory.Embedding{Model: clusterModel, Dim: clusterVecDim, Vector: v}
		})
}

// clusterLoad writes batches through one store and searches through
// another until stopped, recording what was acknowledged and every
// cross-tenant hit.
type clusterLoad struct {
	mu         sync.Mutex
	acked      map[string][]string // team → ids whose Put returned nil
	ackedPuts  int
	failedPuts []error
	searches   int
	failedGets []error
	crossTeam  []string // "team red got blue-00012"
	next       int
}

func (l *clusterLoad) counts() (puts, searches int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ackedPuts, l.searches
}

// snapshot is a copy of the acknowledged ids.
func (l *clusterLoad) snapshot() map[string][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string][]string, len(l.acked))
	for team, ids := range l.acked {
		out[team] = slices.Clone(ids)
	}
	return out
}

func (l *clusterLoad) write(ctx context.Context, w *Store) {
	for ctx.Err() == nil {
		l.mu.Lock()
		start := clusterTeams + l.next // after the seed
		l.next += clusterBatch
		l.mu.Unlock()
		batch := make([]*memory.Memory, clusterBatch)
		for i := range batch {
			n := start + i
			batch[i] = clusterMem(clusterTeamNames[n%clusterTeams], n)
		}
		err := w.Put(ctx, batch)
		if ctx.Err() != nil {
			return // stopped mid-call: neither acknowledged nor failed
		}
		l.mu.Lock()
		if err != nil {
			l.failedPuts = append(l.failedPuts, err)
		} else {
			l.ackedPuts++
			for _, m := range batch {
				l.acked[m.Scope["team"]] = append(l.acked[m.Scope["team"]], m.ID)
			}
		}
		l.mu.Unlock()
	}
}

func (l *clusterLoad) search(ctx context.Context, r *Store) {
	for i := 0; ctx.Err() == nil; i++ {
		team := clusterTeamNames[i%clusterTeams]
		f := memory.Filter{Scope: map[string]string{"team": team}}
		var hits []Hit
		var err error
		if i%2 == 0 {
			hits, err = r.BM25(ctx, LegQuery{Text: "cluster note about the deploy incident", Filter: f, K: 20})
		} else {
			hits, err = r.NearVector(ctx, LegQuery{Vector: clusterMem("any", i).Embedding.Vector, Model: clusterModel, Filter: f, K: 20})
		}
		if ctx.Err() != nil {
			return
		}
		l.mu.Lock()
		if err != nil {
			l.failedGets = append(l.failedGets, err)
		} else {
			l.searches++
			for _, h := range hits {
				if h.Memory.Scope["team"] != team || !strings.HasPrefix(h.Memory.ID, team+"-") {
					l.crossTeam = append(l.crossTeam, fmt.Sprintf("team %s got %s (%v)", team, h.Memory.ID, h.Memory.Scope))
				}
			}
		}
		l.mu.Unlock()
	}
}

// waitFor polls cond every 100 ms until it holds or bound passes.
func waitFor(bound time.Duration, cond func() bool) bool {
	for end := time.Now().Add(bound); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// missing is how many of the ids, per team, s cannot read.
func missing(ctx context.Context, s *Store, ids map[string][]string) (int, error) {
	n := 0
	for team, want := range ids {
		for part := range slices.Chunk(want, 200) {
			got, err := s.GetMany(ctx, map[string]string{"team": team}, part, false)
			if err != nil {
				return 0, err
			}
			for _, id := range part {
				if got[id] == nil {
					n++
				}
			}
		}
	}
	return n, nil
}

func total(ids map[string][]string) int {
	n := 0
	for _, v := range ids {
		n += len(v)
	}
	return n
}

// TestClusterNodeLoss runs on a three-node cluster (.ci/weaviate
// cluster-start): a tenant class with three replicas takes writes at QUORUM
// through node 1 and searches through node 2 while node 3 is SIGKILLed and
// restarted. Writes and searches go on while it is down; every acknowledged
// write is readable at QUORUM at the end, and on the restarted node alone
// once it has caught up; no search ever returns another tenant's memory.
// It logs what reads at ONE and QUORUM through the restarted node missed
// right after its restart (docs/weaviate.md quotes it).
func TestClusterNodeLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts a cluster node")
	}
	cl := weaviatetest.ClusterFromEnv(t)
	class := weaviatetest.Class(t, cl.URLs[0])
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	open := func(node int, consistency string) *Store {
		t.Helper()
		s, err := Open(ctx, Config{Endpoint: cl.URLs[node-1], GRPCPort: cl.GRPCPorts[node-1], Class: class, TenantKey: "team", Replicas: 3,
			Consistency: consistency, Timeout: 10 * time.Second, Retries: 5})
		if err != nil {
			t.Fatalf("open through node %d: %v", node, err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	w := open(1, "QUORUM")
	// The first write creates the tenants and the model's vector, which the
	// searching store then finds when it opens.
	seed := make([]*memory.Memory, clusterTeams)
	for i := range seed {
		seed[i] = clusterMem(clusterTeamNames[i], i)
	}
	put(t, w, seed...)
	r := open(2, "QUORUM")
	if info, err := w.getClass(ctx); err != nil || info.Replication.Factor != 3 {
		t.Fatalf("class replication = %+v, %v; want factor 3", info, err)
	}
	killed := false
	t.Cleanup(func() { // leave the cluster whole for the tests after this one
		if killed {
			if err := cl.Restart(clusterVictim); err != nil {
				t.Errorf("restart node %d after the test: %v", clusterVictim, err)
			}
		}
	})

	load := &clusterLoad{acked: map[string][]string{}}
	for _, m := range seed {
		load.acked[m.Scope["team"]] = append(load.acked[m.Scope["team"]], m.ID)
	}
	lctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); load.write(lctx, w) }()
	go func() { defer wg.Done(); load.search(lctx, r) }()
	defer func() { stop(); wg.Wait() }()

	phase := func(name string, puts, searches int) {
		t.Helper()
		p0, s0 := load.counts()
		if !waitFor(clusterPhase, func() bool { p, s := load.counts(); return p >= p0+puts && s >= s0+searches }) {
			p, s := load.counts()
			load.mu.Lock()
			defer load.mu.Unlock()
			t.Fatalf("%s: %d writes and %d searches went through within %s (want %d and %d); failures: writes %v, searches %v",
				name, p-p0, s-s0, clusterPhase, puts, searches, load.failedPuts, load.failedGets)
		}
	}
	phase("before the kill", clusterMinPuts, clusterMinReads)
	before := load.snapshot()
	if err := cl.Kill(clusterVictim); err != nil {
		t.Fatal(err)
	}
	killed = true
	killedAt := time.Now()
	phase("node down", 2*clusterMinPuts, clusterMinReads)
	// With a node down, ALL cannot be met: over REST such a write failed in
	// every run; over gRPC (BatchObjects carries the level, and the server
	// reads it) one run of the merged build saw it accepted, so what the
	// server does is logged, not asserted, until that is understood.
	all, err := Open(ctx, Config{Endpoint: cl.URLs[0], GRPCPort: cl.GRPCPorts[0], Class: class, TenantKey: "team", Replicas: 3, Consistency: "ALL", Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := all.Put(ctx, []*memory.Memory{clusterMem(clusterTeamNames[0], 99999)}); err == nil {
		t.Logf("a write at ALL with node %d down was accepted", clusterVictim)
	} else {
		t.Logf("a write at ALL with node %d down: %v", clusterVictim, err)
	}
	all.Close()
	if err := cl.Restart(clusterVictim); err != nil {
		t.Fatal(err)
	}
	killed = false
	restartedAt := time.Now()
	down := load.snapshot() // acknowledged before the node answered again
	whileDown := map[string][]string{}
	for team, ids := range down {
		whileDown[team] = ids[len(before[team]):]
	}

	// What consistency ONE through the restarted node reads at once, and
	// how long until it reads every write acknowledged while it was down.
	one := open(clusterVictim, "ONE")
	firstMissing, err := missing(ctx, one, whileDown)
	if err != nil {
		t.Fatalf("read at ONE through the restarted node: %v", err)
	}
	// And QUORUM: Weaviate runs a filtered read (GetMany's, a search's) on
	// one copy and checks only the objects it found against the others, so
	// this misses as much as ONE does (docs/weaviate.md, "A cluster").
	quorumMissing, err := missing(ctx, open(clusterVictim, "QUORUM"), whileDown)
	if err != nil {
		t.Fatalf("read at QUORUM through the restarted node: %v", err)
	}
	phase("after the restart", clusterMinPuts, clusterMinReads)
	stop()
	wg.Wait()

	// Caught up: ONE through the restarted node reads every acknowledged
	// write, and its own shard of each tenant holds as many objects as the
	// other two nodes' (their own count, GET /v1/nodes).
	var (
		lastMissing int
		counts      map[string]map[string]int
		final       = load.snapshot()
	)
	if !waitFor(clusterCatchUp, func() bool {
		if lastMissing, err = missing(ctx, one, final); err != nil || lastMissing > 0 {
			return false
		}
		if counts, err = shardCounts(ctx, cl.URLs[0], class); err != nil {
			return false
		}
		for _, per := range counts {
			if len(per) != 3 || per["node1"] != per["node2"] || per["node1"] != per["node3"] {
				return false
			}
		}
		return len(counts) == clusterTeams
	}) {
		t.Fatalf("the restarted node has not caught up %s after its restart: at ONE it misses %d of %d acknowledged writes; objects per tenant and node %v (last error %v)",
			clusterCatchUp, lastMissing, total(final), counts, err)
	}
	caughtUp := time.Since(restartedAt)
	for node, s := range map[int]*Store{1: w, 2: r, clusterVictim: open(clusterVictim, "QUORUM")} {
		if n, err := missing(ctx, s, final); err != nil || n != 0 {
			t.Errorf("at QUORUM through node %d: %d of %d acknowledged writes missing (%v)", node, n, total(final), err)
		}
	}
	load.mu.Lock()
	defer load.mu.Unlock()
	if len(load.crossTeam) > 0 {
		t.Errorf("%d hits from another tenant, e.g. %v", len(load.crossTeam), load.crossTeam[:min(3, len(load.crossTeam))])
	}
	t.Logf("node %d down %.1fs; writes acknowledged %d (%d memories: %d before the kill, %d while down), failed %d %v; searches %d, failed %d %v; cross-tenant hits %d",
		clusterVictim, restartedAt.Sub(killedAt).Seconds(), load.ackedPuts, total(final), total(before), total(whileDown),
		len(load.failedPuts), firstErrs(load.failedPuts), load.searches, len(load.failedGets), firstErrs(load.failedGets), len(load.crossTeam))
	t.Logf("through node %d right after its restart, of the %d writes acknowledged while it was down, ONE missed %d and QUORUM %d; caught up (every acknowledged write read at ONE, equal copies) %.1fs after the restart",
		clusterVictim, total(whileDown), firstMissing, quorumMissing, caughtUp.Seconds())
}

func firstErrs(errs []error) []error { return errs[:min(2, len(errs))] }

// shardCounts is each tenant's object count per node, as the nodes report
// their own shards.
func shardCounts(ctx context.Context, base, class string) (map[string]map[string]int, error) {
	var nodes struct {
		Nodes []struct {
			Name   string `json:"name"`
			Shards []struct {
				Name        string `json:"name"`
				Class       string `json:"class"`
				ObjectCount int    `json:"objectCount"`
			} `json:"shards"`
		} `json:"nodes"`
	}
	c := newClient(Config{Endpoint: base, Timeout: 10 * time.Second})
	defer c.close()
	if err := c.do(ctx, http.MethodGet, "/v1/nodes/"+url.PathEscape(class), url.Values{"output": {"verbose"}}, nil, &nodes); err != nil {
		return nil, fmt.Errorf("node status: %w", err)
	}
	out := map[string]map[string]int{}
	for _, n := range nodes.Nodes {
		for _, sh := range n.Shards {
			if out[sh.Name] == nil {
				out[sh.Name] = map[string]int{}
			}
			out[sh.Name][n.Name] = sh.ObjectCount
		}
	}
	return out, nil
}
