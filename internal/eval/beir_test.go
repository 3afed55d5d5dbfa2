package eval

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const (
	beirCorpus = `{"_id": "d1", "title": "Cats", "text": "Cats purr.", "metadata": {}}
{"_id": "d2", "title": "", "text": "Dogs bark."}
{"_id": 3, "title": "Only a title", "text": ""}
{"_id": "d4", "title": "", "text": "  "}
{"_id": "d1", "title": "dup", "text": "repeated id"}

`
	beirQueriesTSV   = "q1\tdo cats purr\nq2\twhy do dogs bark\nq3\tunjudged query\n"
	beirQueriesJSONL = `{"_id": "q1", "text": "do cats purr"}
{"_id": "q2", "text": "why do dogs bark"}
{"_id": "q3", "text": "unjudged query"}
`
	beirQrelsTREC = "q1 0 d1 1\nq2 0 d2 2\nq2 0 3 1\nq2 0 gone 1\nq3 0 d1 0\nq9 0 d1 1\n"
	beirQrelsTSV  = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t2\nq2\t3\t1\nq2\tgone\t1\nq3\td1\t0\nq9\td1\t1\n"
)

func gz(t testing.TB, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func writeFiles(t testing.TB, files map[string][]byte) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tiny")
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadBEIRLayouts(t *testing.T) {
	cases := []struct {
		name  string
		files map[string][]byte
	}{
		{"plain tsv and trec qrels", map[string][]byte{
			"corpus.jsonl": []byte(beirCorpus), "queries.test.tsv": []byte(beirQueriesTSV), "qrels.test.txt": []byte(beirQrelsTREC)}},
		{"gzipped corpus and queries", map[string][]byte{
			"corpus.jsonl.gz": gz(t, beirCorpus), "queries.test.tsv.gz": gz(t, beirQueriesTSV), "qrels.test.txt": []byte(beirQrelsTREC)}},
		{"jsonl queries and beir qrels", map[string][]byte{
			"corpus.jsonl": []byte(beirCorpus), "queries.jsonl": []byte(beirQueriesJSONL), "qrels/test.tsv": []byte(beirQrelsTSV)}},
		{"gzip under a plain name", map[string][]byte{
			"corpus.jsonl": gz(t, beirCorpus), "queries.jsonl.gz": gz(t, beirQueriesJSONL), "qrels.test.txt": []byte(beirQrelsTREC)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := LoadBEIR(writeFiles(t, tc.files), "test")
			if err != nil {
				t.Fatal(err)
			}
			if ds.Name != "tiny" || len(ds.Corpora) != 1 {
				t.Fatalf("name %q corpora %d", ds.Name, len(ds.Corpora))
			}
			c := ds.Corpora[0]
			if len(c.Docs) != 3 {
				t.Fatalf("docs = %d, want 3 (d4 empty, second d1 repeated)", len(c.Docs))
			}
			if d := c.Docs[0]; d.ID != "d1" || d.Name != "Cats" || d.Text != "Cats purr." {
				t.Errorf("doc 0 = %+v", d)
			}
			if d := c.Docs[2]; d.ID != "3" || d.Name != "" || d.Text != "Only a title" {
				t.Errorf("title-only doc = %+v, want numeric id 3 with the title as text", d)
			}
			if len(c.Cases) != 2 || ds.Skipped != 1 {
				t.Fatalf("cases %d skipped %d, want 2 and 1 (q3 has no relevant judgement)", len(c.Cases), ds.Skipped)
			}
			if q := c.Cases[1]; q.ID != "q2" || q.Text != "why do dogs bark" || q.Gold["d2"] != 2 || q.Gold["3"] != 1 || q.Gold["gone"] != 1 {
				t.Errorf("case q2 = %+v", q)
			}
			notes := strings.Join(ds.Notes, "\n")
			for _, want := range []string{"1 corpus documents with no title or text", "1 repeated corpus ids", "1 queries skipped",
				"1 relevant judgements name documents not in the corpus", "1 judged queries missing"} {
				if !strings.Contains(notes, want) {
					t.Errorf("notes lack %q:\n%s", want, notes)
				}
			}
		})
	}
}

func TestLoadBEIRErrors(t *testing.T) {
	good := map[string]string{"corpus.jsonl": beirCorpus, "queries.test.tsv": beirQueriesTSV, "qrels.test.txt": beirQrelsTREC}
	cases := []struct {
		name     string
		override map[string]string
		want     string
	}{
		{"no corpus", map[string]string{"corpus.jsonl": ""}, "none of corpus.jsonl"},
		{"bad corpus json", map[string]string{"corpus.jsonl": "{\"_id\": \"a\", \"text\": \"x\"}\n{broken\n"}, "corpus line 2"},
		{"corpus without id", map[string]string{"corpus.jsonl": "{\"text\": \"x\"}\n"}, "_id: missing"},
		{"corrupt gzip", map[string]string{"corpus.jsonl": "\x1f\x8bnot gzip"}, "gzip"},
		{"query without tab", map[string]string{"queries.test.tsv": "q1 no tab here\n"}, "queries line 1"},
		{"repeated query", map[string]string{"queries.test.tsv": "q1\ta\nq1\tb\n"}, "repeated"},
		{"bad grade", map[string]string{"qrels.test.txt": "q1 0 d1 high\n"}, "grade \"high\""},
		{"short qrels line", map[string]string{"qrels.test.txt": "q1 d1\n"}, "qrels line 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string][]byte{}
			for k, v := range good {
				files[k] = []byte(v)
			}
			for k, v := range tc.override {
				if v == "" {
					delete(files, k)
				} else {
					files[k] = []byte(v)
				}
			}
			_, err := LoadBEIR(writeFiles(t, files), "")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	if _, err := LoadBEIR(t.TempDir(), "test"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("empty dir: err = %v, want os.ErrNotExist", err)
	}
}

func FuzzReadQrels(f *testing.F) {
	f.Add(beirQrelsTREC)
	f.Add(beirQrelsTSV)
	f.Add("q 0 d -3\r\n\n")
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ReadQrels(strings.NewReader(s))
		if err == nil && q == nil {
			t.Fatal("nil qrels without error")
		}
	})
}

func FuzzReadQueriesTSV(f *testing.F) {
	f.Add(beirQueriesTSV)
	f.Add("a\t\tb\r\n")
	f.Fuzz(func(t *testing.T, s string) {
		qs, err := ReadQueriesTSV(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, q := range qs {
			if q.ID == "" || q.Text == "" {
				t.Fatalf("empty id or text accepted: %+v", q)
			}
		}
	})
}

func FuzzReadBEIRCorpus(f *testing.F) {
	f.Add(beirCorpus)
	f.Add(beirQueriesJSONL)
	f.Add(`{"_id": 1e400, "text": "x"}`)
	f.Fuzz(func(t *testing.T, s string) {
		docs, _, err := ReadBEIRCorpus(strings.NewReader(s))
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, d := range docs {
			if d.ID == "" || strings.TrimSpace(d.Text) == "" || seen[d.ID] {
				t.Fatalf("bad doc accepted: %+v", d)
			}
			seen[d.ID] = true
		}
	})
}

func BenchmarkReadBEIRCorpus(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run("docs="+strconv.Itoa(n), func(b *testing.B) {
			var s strings.Builder
			for i := range n {
				s.WriteString(`{"_id": "` + strconv.Itoa(i) + `", "title": "A title about cells", "text": "` +
					strings.Repeat("Some abstract sentence about proteins and cells. ", 20) + `"}` + "\n")
			}
			data := s.String()
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := ReadBEIRCorpus(strings.NewReader(data)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
