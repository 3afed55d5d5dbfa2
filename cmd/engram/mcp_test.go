package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpChildEnv makes the test binary act as "engram mcp" (see TestMCPChild).
const mcpChildEnv = "ENGRAM_TEST_MCP_CHILD"

// TestMCPChild is not a test: run as a child process with mcpChildEnv set,
// it is the real "engram mcp" on the process's stdin and stdout.
func TestMCPChild(t *testing.T) {
	if os.Getenv(mcpChildEnv) != "1" {
		t.Skip("runs only as the child of TestMCPCommand")
	}
	os.Exit(run(context.Background(), []string{"mcp"}, os.Stdin, os.Stdout, os.Stderr))
}

// mcpCall calls a tool that must succeed and decodes its structured content.
func mcpCall(tb testing.TB, cs *mcp.ClientSession, name string, args map[string]any, out any) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if res.IsError {
		tb.Fatalf("%s: tool error: %s", name, text.String())
	}
	if out != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
	}
	return text.String()
}

// addAndFind adds a memory over a session and finds it by search and by id.
func addAndFind(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(lt.Tools) != 10 {
		t.Fatalf("list tools: %v (%d tools)", err, len(lt.Tools))
	}
	var added struct{ ID string }
	mcpCall(t, cs, "memory_add", map[string]any{"text": "The nightly backup job writes to bucket s3://acme-backups/nightly", "type": "fact"}, &added)
	var resp struct{ Results []struct{ ID string } }
	text := mcpCall(t, cs, "memory_search", map[string]any{"query": "where do nightly backups go?"}, &resp)
	if len(resp.Results) == 0 || resp.Results[0].ID != added.ID || !strings.Contains(text, added.ID) {
		t.Fatalf("search did not find %s first: %+v\n%s", added.ID, resp.Results, text)
	}
	if got := mcpCall(t, cs, "memory_get", map[string]any{"id": added.ID}, nil); !strings.Contains(got, "acme-backups") {
		t.Fatalf("get: %s", got)
	}
	return added.ID
}

// mcpStdio runs the command line (an "engram mcp") on pipes and connects a
// client to it; stop closes the session, which closes the server's stdin,
// and fails the test unless the server then stops cleanly.
func mcpStdio(t *testing.T, args ...string) (cs *mcp.ClientSession, stop func()) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := run(context.Background(), args, inR, outW, &stderr)
		outW.Close()
		done <- code
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).
		Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return cs, func() {
		t.Helper()
		cs.Close()
		if code := <-done; code != 0 {
			t.Fatalf("engram mcp exit %d: %s", code, stderr.String())
		}
	}
}

// TestMCPStdio runs the mcp command's own code path with pipes for stdio.
func TestMCPStdio(t *testing.T) {
	db := deliveryStore(t)
	for _, tc := range []struct {
		name  string
		args  []string
		scope string // the scope added memories must carry
	}{
		{"whole store", []string{"--db", db, "mcp"}, ""},
		{"scoped", []string{"--db", db, "mcp", "--scope", "project=engram"}, "engram"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, stop := mcpStdio(t, tc.args...)
			id := addAndFind(t, cs)
			var got struct{ Scope map[string]string }
			mcpCall(t, cs, "memory_get", map[string]any{"id": id}, &got)
			if got.Scope["project"] != tc.scope {
				t.Errorf("scope %v, want project=%q", got.Scope, tc.scope)
			}
			var resp struct{ Results []struct{ ID string } }
			mcpCall(t, cs, "memory_search", map[string]any{"query": "PostgreSQL staging database replication"}, &resp)
			foundBilling := len(resp.Results) > 0 && resp.Results[0].ID == "01HZX00000000000000000PGVER"
			if foundBilling != (tc.scope == "") {
				t.Errorf("billing memory found=%v under scope %q", foundBilling, tc.scope)
			}
			stop()
		})
	}
}

// TestMCPCommand runs the real stdio path: this test binary re-executed as
// "engram mcp", driven by the SDK's CommandTransport over the child's stdin
// and stdout.
func TestMCPCommand(t *testing.T) {
	db := deliveryStore(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestMCPChild$")
	cmd.Env = append(os.Environ(), mcpChildEnv+"=1", "ENGRAM_DB="+db)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("start engram mcp: %v", err)
	}
	addAndFind(t, cs)
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v (stderr %q)", err, stderr.String())
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Errorf("engram mcp did not exit 0: %v, stderr %q", cmd.ProcessState, stderr.String())
	}
}
