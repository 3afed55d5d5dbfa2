package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLowListUsage: the command-line defects of issue 25's low list, each a
// row: a usage mistake is one line on stderr and exit 2, naming what is wrong
// and the flag or form that fixes it.
func TestLowListUsage(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "none")
	t.Setenv("ENGRAM_URL", "")
	dir := t.TempDir()
	db := filepath.Join(dir, "low.db")
	id := strings.TrimSpace(mustCLI(t, db, "", "add", "The deploy key lives in the vault"))
	keys := filepath.Join(dir, "keys.json")
	if err := os.WriteFile(keys, []byte(`{"keys": [{"key": "k1", "key": "k2", "scope": {"team": "a"}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stdout string // a part of stdout
		stderr string // a part of stderr, which is then one line
	}{
		{name: "update without a field", args: []string{"update", id}, code: 2,
			stderr: "update " + id + ": no field to change: give at least one of --text"},
		{name: "flag typo", args: []string{"search", "--limt", "3", "deploy"}, code: 2,
			stderr: "engram: unknown flag --limt; did you mean --limit? (engram help search lists the flags)"},
		{name: "flag typo of a global flag", args: []string{"list", "--jsno"}, code: 2,
			stderr: "unknown flag --jsno; did you mean --json?"},
		{name: "flag far from any", args: []string{"list", "--zzzz"}, code: 2,
			stderr: "engram: unknown flag --zzzz (engram help list lists the flags)"},
		{name: "flag value that does not parse", args: []string{"search", "deploy", "--limit", "abc"}, code: 2,
			stderr: `engram: --limit "abc": want an integer`},
		{name: "bool flag value", args: []string{"search", "deploy", "--no-record=maybe"}, code: 2,
			stderr: `engram: --no-record "maybe": want true or false`},
		{name: "search without a query", args: []string{"search"}, code: 2,
			stderr: "engram: search: missing QUERY (usage: engram search QUERY... [flags])"},
		{name: "get of two ids", args: []string{"get", id, id}, code: 2,
			stderr: "get: 2 arguments given, want one ID"},
		{name: "list with an argument", args: []string{"list", "deploy"}, code: 2,
			stderr: `list takes no arguments, got "deploy"`},
		{name: "import of a directory", args: []string{"import", dir}, code: 2,
			stderr: "engram: import: " + dir + " is a directory: give a JSONL file, or - for standard input"},
		{name: "negative budget", args: []string{"search", "deploy", "--context", "--budget", "-1"}, code: 2,
			stderr: "engram: --budget -1: must be 0 (unlimited) or more"},
		{name: "import: a wrong type in JSON's words", stdin: `{"text": "a", "tags": "x"}` + "\n", args: []string{"import", "-"}, code: 2,
			stderr: `engram: invalid: line 1: field "tags": expected an array of strings, got a string (nothing imported`},
		{name: "import: an integer field", stdin: `{"text": "a", "seq": 1.5, "episode": "e"}` + "\n", args: []string{"import", "-"}, code: 2,
			stderr: `line 1: field "seq": expected an integer, got the number 1.5`},
		{name: "import: a time that is not one", stdin: `{"text": "a", "created_at": "yesterday"}` + "\n", args: []string{"import", "-"}, code: 2,
			stderr: `line 1: field "created_at": "yesterday" is not an RFC 3339 time`},
		{name: "batch: a wrong type", stdin: `{"query": 3}` + "\n", args: []string{"search", "--batch", "-"}, code: 2,
			stdout: `invalid query: field \"query\": expected a string, got a number`, stderr: "--batch: 1 of 1 lines were invalid"},
		{name: "keys file with a field twice", args: []string{"serve", "--keys", keys}, code: 2,
			stderr: `engram: --keys ` + keys + `: keys: field "keys[0].key" appears twice in the same object`},
		{name: "add at the zero time", args: []string{"add", "x", "--at", "0001-01-01T00:00:00Z"}, code: 2,
			stderr: `engram: --at: "0001-01-01T00:00:00Z" is the zero time, outside the years 1678 to 2261 a store can hold`},
		{name: "import at the zero time", stdin: `{"text": "x", "created_at": "0001-01-01T00:00:00Z"}` + "\n", args: []string{"import", "-"}, code: 2,
			stderr: `line 1: field "created_at": 0001-01-01T00:00:00Z is outside the years 1678 to 2261`},
		{name: "a cursor that does not decode", args: []string{"list", "--cursor", "%%%"}, code: 2,
			stderr: `engram: invalid: cursor "%%%" is not one a listing returned`},
		{name: "empty import answers an empty list", args: []string{"import", "-", "--json"}, stdout: `"ids": []`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errs, code := cli(t, db, c.stdin, c.args...)
			if code != c.code || !strings.Contains(out, c.stdout) || !strings.Contains(errs, c.stderr) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q", code, out, errs, c.code, c.stdout, c.stderr)
			}
			if c.code != 0 && strings.Count(errs, "\n") != 1 {
				t.Fatalf("stderr is not one line: %q", errs)
			}
		})
	}
}

// TestListMoreRepeatsFlags: list's "more:" hint is a command that runs: it
// keeps --db and the filters given, and only adds --cursor.
func TestListMoreRepeatsFlags(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "none")
	t.Setenv("ENGRAM_URL", "")
	t.Setenv("ENGRAM_DB", "")
	db := filepath.Join(t.TempDir(), "more db.db")
	for _, text := range []string{"first", "second", "third"} {
		mustCLI(t, db, "", "add", "memory "+text, "--scope", "team=t1", "--tag", "x")
	}
	_, errs, code := cli(t, db, "", "list", "--limit", "1", "--scope", "team=t1", "--tag", "x", "--order", "created_at")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	line, ok := strings.CutPrefix(strings.TrimSpace(errs), "engram: more: ")
	if !ok {
		t.Fatalf("no more: hint: %q", errs)
	}
	for _, want := range []string{"engram list ", "--db '" + db + "'", "--limit 1", "--scope team=t1", "--tag x", "--order created_at", "--cursor "} {
		if !strings.Contains(line, want) {
			t.Fatalf("more: %q lacks %q", line, want)
		}
	}
	// Run it as printed: the next page, the second memory.
	words := shellWords(t, line)
	out, errs, code := engramRun(t, "", words[1:]...)
	if code != 0 || !strings.Contains(out, "memory second") {
		t.Fatalf("the more: command: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// shellWords splits a command line the way shellQuote quotes it.
func shellWords(t *testing.T, line string) []string {
	var words []string
	var cur strings.Builder
	in, started := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			in, started = !in, true
		case r == ' ' && !in:
			if started {
				words = append(words, cur.String())
			}
			cur.Reset()
			started = false
		default:
			cur.WriteRune(r)
			started = true
		}
	}
	if in {
		t.Fatalf("unbalanced quote in %q", line)
	}
	if started {
		words = append(words, cur.String())
	}
	return words
}

// TestHelpDefaults: help shows only defaults that apply: update has none
// (--type is add's "note"), and search shows one default a flag, with no
// sentinel (-1) standing for "not given". The goldens hold the help texts.
func TestHelpDefaults(t *testing.T) {
	for _, cmd := range []string{"update", "search", "engram"} {
		t.Run(cmd, func(t *testing.T) {
			args := []string{"help", cmd}
			if cmd == "engram" {
				args = []string{"--help"} // says how the legs are fused: by score unless --fusion rrf
			}
			out, errs, code := engramRun(t, "", args...)
			if code != 0 || errs != "" {
				t.Fatalf("exit %d: %s", code, errs)
			}
			for _, line := range strings.Split(out, "\n") {
				if strings.Count(line, "default") > 1 || strings.Contains(line, "(default -1)") ||
					(cmd == "update" && strings.Contains(line, "default") && !strings.Contains(line, "--db")) {
					t.Errorf("engram help %s: %q", cmd, line)
				}
			}
			checkGolden(t, "help/"+cmd+".golden", out)
		})
	}
}

// TestDoctorRepairSaysReindex: after doctor --repair clears an unreadable
// vector, a hint says to run engram reindex.
func TestDoctorRepairSaysReindex(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "none")
	t.Setenv("ENGRAM_URL", "")
	db := filepath.Join(t.TempDir(), "vec.db")
	mustCLI(t, db, `{"id":"blob","text":"a memory with a vector","embedding":{"model":"m","vector":[0.6,0.8]}}`+"\n", "import", "-")
	damageFile(t, db, `UPDATE memories SET embedding = x'0102' WHERE id = 'blob'`)
	out, errs, code := cli(t, db, "", "doctor", "--repair")
	if code != 0 || !strings.Contains(out, "fixed:") {
		t.Fatalf("doctor --repair: exit %d\n%s\n%s", code, out, errs)
	}
	if want := "engram: hint: 1 unreadable vector(s) cleared: run engram reindex"; !strings.Contains(errs, want) {
		t.Fatalf("stderr %q lacks %q", errs, want)
	}
	if _, err := os.Stat(db); err != nil {
		t.Fatal(err)
	}
}
