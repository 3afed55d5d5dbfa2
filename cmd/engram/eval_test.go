package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
)

// runCLI runs one command line and returns stdout, stderr and the exit code.
func runCLI(t testing.TB, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// beirFixture writes a tiny BEIR data set named scifact (so the published
// anchors apply) under a new data directory and returns that directory.
func beirFixture(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"scifact/corpus.jsonl": `{"_id": "d1", "title": "Aspirin and headaches", "text": "Aspirin relieves tension headaches in adults."}
{"_id": "d2", "title": "Vitamin D", "text": "Vitamin D deficiency is common in northern winters."}
{"_id": "d3", "title": "Sleep", "text": "Adolescents need about nine hours of sleep."}
{"_id": "d4", "title": "Coffee", "text": "Caffeine improves short term alertness."}
{"_id": 5, "title": "Exercise", "text": "Regular exercise lowers resting blood pressure."}
`,
		"scifact/queries.test.tsv": "q1\taspirin for tension headaches\nq2\tvitamin D deficiency in winter\nq3\texercise and blood pressure\nq4\tunjudged query about sleep\n",
		"scifact/qrels.test.txt":   "q1 0 d1 1\nq2 0 d2 2\nq3 0 5 1\n",
	})
	return dir
}

// locomoFixture writes a tiny LoCoMo file: one conversation, two sessions,
// three questions of which one has no evidence.
func locomoFixture(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"locomo/locomo-dev.json": `[{
  "sample_id": "conv-x",
  "conversation": {
    "speaker_a": "Ann", "speaker_b": "Bob",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
      {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a greyhound called Pixel last week."},
      {"speaker": "Bob", "dia_id": "D1:2", "text": "Lovely! I am training for the Berlin marathon."}
    ],
    "session_2_date_time": "10:00 am on 20 May, 2023",
    "session_2": [
      {"speaker": "Ann", "dia_id": "D2:1", "text": "My pottery class starts on Tuesday."},
      {"speaker": "Bob", "dia_id": "D2:2", "text": "I finished the marathon in four hours."}
    ]
  },
  "qa": [
    {"question": "What is the name of Ann's greyhound?", "answer": "Pixel", "evidence": ["D1:1"], "category": 4},
    {"question": "Which marathon did Bob run?", "answer": "Berlin", "evidence": ["D1:2", "D2:2"], "category": 1},
    {"question": "What colour is the sky?", "answer": "blue", "evidence": [], "category": 3}
  ]
}]`})
	return dir
}

// evalReport is the part of the JSON report the tests read.
type evalReport struct {
	Dataset string
	Queries int
	Skipped int
	Docs    int
	Modes   []struct {
		Name       string
		Queries    int
		Metrics    map[string]float64
		Strategies map[string]int
	}
	Anchors []struct{ Name string }
}

func readReport(t testing.TB, path string) evalReport {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r evalReport
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("report: %v\n%s", err, data)
	}
	return r
}

func TestEvalBEIR(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "")
	data, out := beirFixture(t), t.TempDir()
	jsonPath, svgPath := filepath.Join(out, "r.json"), filepath.Join(out, "r.svg")
	stdout, stderr, code := runCLI(t, "eval", "--dataset", "scifact", "--data", data,
		"--modes", "bm25,vector,hybrid:w=0.1", "--json", jsonPath, "--svg", svgPath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"scifact: 3 queries over 1 corpus (5 memories), 1 skipped", "ndcg@10", "hybrid:w=0.1", "BM25 flat (Lucene) (published)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "5 memories added") {
		t.Errorf("no progress on stderr: %q", stderr)
	}
	r := readReport(t, jsonPath)
	if r.Dataset != "scifact" || r.Queries != 3 || r.Skipped != 1 || r.Docs != 5 || len(r.Modes) != 3 || len(r.Anchors) == 0 {
		t.Fatalf("report = %+v", r)
	}
	bm := r.Modes[0]
	if bm.Name != "bm25" || bm.Metrics["ndcg@10"] != 1 || bm.Metrics["recall@100"] != 1 || bm.Strategies["bm25"] != 3 {
		t.Errorf("bm25 on distinctive queries: %+v", bm)
	}
	if r.Modes[1].Strategies["vector"] != 3 {
		t.Errorf("vector mode ran %v, want the built-in embedder's vector leg", r.Modes[1].Strategies)
	}
	svg, err := os.ReadFile(svgPath)
	if err != nil || !bytes.HasPrefix(bytes.TrimSpace(svg), []byte("<svg")) {
		t.Errorf("svg: %v %.60q", err, svg)
	}
}

func TestEvalLoCoMo(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "none")
	data := locomoFixture(t)
	tests := []struct {
		level string
		docs  int
		args  []string
	}{
		{"turn", 4, nil},
		{"session", 2, nil},
		{"turn", 4, []string{"--locomo-date", "--locomo-neighbours", "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.level+strings.Join(tt.args, ""), func(t *testing.T) {
			jsonPath := filepath.Join(t.TempDir(), "r.json")
			a := append([]string{"eval", "--dataset", "locomo", "--data", data, "--level", tt.level,
				"--modes", "bm25", "--json", jsonPath, "--anchors", "none"}, tt.args...)
			stdout, stderr, code := runCLI(t, a...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			r := readReport(t, jsonPath)
			if r.Dataset != "locomo-"+tt.level || r.Queries != 2 || r.Skipped != 1 || r.Docs != tt.docs || len(r.Anchors) != 0 {
				t.Fatalf("report = %+v", r)
			}
			if got := r.Modes[0].Metrics["any@5"]; got != 1 {
				t.Errorf("bm25 any@5 = %v, want 1 (every question finds a gold unit in 4 units)", got)
			}
			if !strings.Contains(stdout, "1 questions skipped: empty evidence") || !strings.Contains(stdout, "any@5 by category") {
				t.Errorf("table:\n%s", stdout)
			}
		})
	}
}

// TestEvalSkipAll: a --locomo-skip that leaves no conversation is refused,
// naming the flag, instead of scoring nothing as 0.
func TestEvalSkipAll(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "none")
	_, stderr, code := runCLI(t, "eval", "--dataset", "locomo", "--data", locomoFixture(t), "--modes", "bm25", "--anchors", "none", "--locomo-skip", "1")
	if code != 2 || !strings.Contains(stderr, "--locomo-skip 1") || !strings.Contains(stderr, "none of the file's 1") {
		t.Errorf("exit %d, stderr %q: want 2 and a line naming --locomo-skip and the file's conversation count", code, stderr)
	}
}

func TestEvalBadInput(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "none")
	data := beirFixture(t)
	badAnchors := filepath.Join(t.TempDir(), "a.json")
	writeFiles(t, filepath.Dir(badAnchors), map[string]string{"a.json": `[{"dataset": "x"}]`})
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no dataset", []string{"eval"}, "--dataset is required"},
		{"bad mode", []string{"eval", "--dataset", "scifact", "--data", data, "--modes", "bm25,nope"}, `strategy "nope"`},
		{"missing data", []string{"eval", "--dataset", "scifact", "--data", filepath.Join(data, "absent")}, "data directory"},
		{"missing corpus", []string{"eval", "--dataset", "nfcorpus", "--data", data}, "corpus.jsonl"},
		{"missing locomo", []string{"eval", "--dataset", "locomo", "--data", data}, "locomo-dev.json"},
		{"bad level", []string{"eval", "--dataset", "locomo", "--level", "word"}, "--level"},
		{"bad limit", []string{"eval", "--dataset", "scifact", "--limit", "0"}, "--limit"},
		{"negative skip", []string{"eval", "--dataset", "locomo", "--locomo-skip", "-1"}, "--locomo-skip"},
		{"bad anchors", []string{"eval", "--dataset", "scifact", "--data", data, "--anchors", badAnchors}, "--anchors"},
		{"extra argument", []string{"eval", "scifact"}, `eval takes no arguments, got "scifact"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q, stdout %q; want exit 2 and one line with %q", code, stderr, stdout, tt.want)
			}
		})
	}
}

// TestEvalDelivery: engram eval --dataset delivery runs inject over the
// LoCoMo questions and the absent-topic pairings, names the model and its
// bar, and finds its simulation equal to the real inject on every question.
func TestEvalDelivery(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "")
	data := locomoFixture(t)
	sf := beirFixture(t)
	if err := os.Rename(filepath.Join(sf, "scifact"), filepath.Join(data, "scifact")); err != nil {
		t.Fatal(err)
	}
	jsonPath := filepath.Join(t.TempDir(), "d.json")
	stdout, stderr, code := runCLI(t, "eval", "--dataset", "delivery", "--data", data, "--json", jsonPath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	emb, err := engram.BuiltinEmbedder()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"model " + emb.Model(), "← the model's bar", "← suggested", "questions, 0 differ",
		"answerable 2", "scifact 3", "absent:locomo→scifact 2", "absent:scifact→locomo 3"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	var rep struct {
		Bar     float64
		Checked int
		Default struct{ Delivered float64 }
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil || json.Unmarshal(b, &rep) != nil {
		t.Fatalf("report: %v\n%s", err, b)
	}
	if rep.Bar <= 0 || rep.Checked != 10 || rep.Default.Delivered != 1 {
		t.Fatalf("report %+v: want the model's bar, 10 questions checked, both answerable questions delivered", rep)
	}
}
