package weaviatetest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/skipnote"
)

// EnvCluster names the folder of a running three-node cluster, as
// `.ci/weaviate cluster-start DIR` writes it (.ci/run sets it).
const EnvCluster = "ENGRAM_WEAVIATE_CLUSTER"

// Cluster is a three-node Weaviate cluster on loopback that .ci/weaviate
// started; a test may kill and restart its nodes.
type Cluster struct {
	Dir  string
	URLs []string // the REST base of node 1, 2, 3 (URLs[0] is node 1)
	// GRPCPorts are the nodes' gRPC ports, in URLs' order: searches and
	// batch writes go there.
	GRPCPorts []int
	ctl       string // the .ci/weaviate that started it
}

// ClusterFromEnv returns the cluster ENGRAM_WEAVIATE_CLUSTER names, checking
// that every node answers ready. Without one the test is skipped, and fails
// under CI=true.
func ClusterFromEnv(t testing.TB) *Cluster {
	t.Helper()
	dir := os.Getenv(EnvCluster)
	if dir == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("weaviate cluster: %s is not set (CI=true: .ci/run starts the cluster and sets it)", EnvCluster)
		}
		// A reason of its own: without a cluster only these tests skip.
		skipCluster(t, "%s is not set (start one with .ci/weaviate cluster-start DIR and set it to DIR; .ci/run does)", EnvCluster)
	}
	c, err := openCluster(dir)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("weaviate cluster: %v", err)
		}
		skipCluster(t, "%v", err)
	}
	return c
}

func openCluster(dir string) (*Cluster, error) {
	urls, err := os.ReadFile(filepath.Join(dir, "urls"))
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %w (not a folder of .ci/weaviate cluster-start)", EnvCluster, dir, err)
	}
	ctl, err := os.ReadFile(filepath.Join(dir, "ctl"))
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %w", EnvCluster, dir, err)
	}
	c := &Cluster{Dir: dir, URLs: strings.Fields(string(urls)), ctl: strings.TrimSpace(string(ctl))}
	if len(c.URLs) != 3 {
		return nil, fmt.Errorf("%s: %d node URLs, want 3", filepath.Join(dir, "urls"), len(c.URLs))
	}
	for i := range c.URLs {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("node%d", i+1), "grpc_port"))
		if err != nil {
			return nil, fmt.Errorf("cluster node %d: %w", i+1, err)
		}
		port, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return nil, fmt.Errorf("cluster node %d: gRPC port %q: %v", i+1, b, err)
		}
		c.GRPCPorts = append(c.GRPCPorts, port)
	}
	for i, u := range c.URLs {
		if err := waitReady(context.Background(), u, nil, 10*time.Second); err != nil {
			return nil, fmt.Errorf("cluster node %d (%s) is not ready: %v", i+1, u, err)
		}
	}
	return c, nil
}

// GRPCPort is the gRPC port of the node whose REST base is url, or 0.
func (c *Cluster) GRPCPort(url string) int {
	for i, u := range c.URLs {
		if u == url {
			return c.GRPCPorts[i]
		}
	}
	return 0
}

// Kill SIGKILLs node n (1..3) by its PID, as a crash would, and waits
// until it is gone.
func (c *Cluster) Kill(n int) error { return c.run("node-kill", n) }

// Restart starts node n again on its ports and data and waits until it
// answers ready.
func (c *Cluster) Restart(n int) error { return c.run("node-start", n) }

func (c *Cluster) run(verb string, n int) error {
	var out bytes.Buffer
	cmd := exec.Command(c.ctl, verb, c.Dir, strconv.Itoa(n))
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s %s %d: %w: %s", c.ctl, verb, c.Dir, n, err, strings.TrimSpace(out.String()))
	}
	return nil
}

// skipCluster skips with a reason reported once for the package (skipnote).
func skipCluster(t testing.TB, format string, a ...any) {
	t.Helper()
	skipnote.Skipf(t, "weaviate cluster: "+format, a...)
}
