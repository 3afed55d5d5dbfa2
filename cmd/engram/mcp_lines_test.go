package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMCPBadLineAndEOF drives the real binary ("engram mcp", this test binary
// re-executed) with a fixed input, as `printf ... | engram mcp` does: a line
// that is not JSON and one that is no JSON-RPC message get JSON-RPC errors
// and the session goes on (before, the first ended it with rc 1); and the
// input ending straight after the calls still gets every answer, the
// initialize one included (before, nothing was printed), with exit 0.
func TestMCPBadLineAndEOF(t *testing.T) {
	db := deliveryStore(t)
	calls := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"printf","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":"staging database"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
	}
	t.Run("eof after the calls", func(t *testing.T) { mcpLines(t, db, strings.Join(calls, "\n")+"\n", false) })
	bad := append([]string{`this is not json`, calls[0], `{"hello":"world","id":7}`}, calls[1:]...)
	t.Run("bad lines", func(t *testing.T) { mcpLines(t, db, strings.Join(bad, "\n")+"\n", true) })
}

func mcpLines(t *testing.T, db, input string, badLines bool) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestMCPChild$")
	cmd.Env = append(os.Environ(), mcpChildEnv+"=1", "ENGRAM_DB="+db)
	cmd.Stdin = strings.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("engram mcp: %v\nstdout %s\nstderr %s", err, stdout.String(), stderr.String())
		}
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("engram mcp did not exit at the end of its input; stdout %s", stdout.String())
	}
	type answer struct {
		ID     any             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	var got []answer
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var a answer
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatalf("stdout line %q is not JSON: %v", line, err)
		}
		got = append(got, a)
	}
	find := func(id any) *answer {
		for i := range got {
			if got[i].ID == id {
				return &got[i]
			}
		}
		return nil
	}
	if badLines {
		if a := find(nil); a == nil || a.Error == nil || a.Error.Code != -32700 {
			t.Errorf("no parse error (-32700, id null) for the line that is not JSON: %s", stdout.String())
		}
		if a := find(float64(7)); a == nil || a.Error == nil || a.Error.Code != -32600 {
			t.Errorf("no invalid-request error (-32600, id 7) for the object that is no message: %s", stdout.String())
		}
	}
	for _, id := range []float64{1, 2, 3} {
		if a := find(id); a == nil || a.Error != nil || len(a.Result) == 0 {
			t.Errorf("no result for request %v: %s", id, stdout.String())
		}
	}
	if a := find(float64(2)); a != nil && !strings.Contains(string(a.Result), "staging") {
		t.Errorf("the search's answer: %s", a.Result)
	}
}
