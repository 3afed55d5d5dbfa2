package eval

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/engram-memory/engram/memory"
)

// BEIRMetrics are the columns BEIR results are reported with.
var BEIRMetrics = []string{NDCG10, Recall100, Recall10, NDCG5, MRR, Hit1}

// LoadBEIR loads a BEIR-layout data set from dir for one split ("test"):
//
//   - corpus.jsonl or corpus.jsonl.gz: one {"_id", "title", "text"} object a line;
//     title becomes the memory's Name, text its Text, _id its ID;
//   - queries.<split>.tsv[.gz] ("qid<TAB>text") or queries.jsonl[.gz] ({"_id", "text"});
//   - qrels.<split>.txt (TREC "qid 0 docid grade") or qrels/<split>.tsv (BEIR's
//     "query-id corpus-id score" with a header line).
//
// Gzip is recognised by content, not by name. Only queries with at least one
// relevant judgement become cases; the rest are counted in Skipped.
func LoadBEIR(dir, split string) (*Dataset, error) {
	if split == "" {
		split = "test"
	}
	corpusPath, err := firstExisting(dir, "corpus.jsonl", "corpus.jsonl.gz")
	if err != nil {
		return nil, err
	}
	queriesPath, err := firstExisting(dir, "queries."+split+".tsv", "queries."+split+".tsv.gz",
		"queries.jsonl", "queries.jsonl.gz")
	if err != nil {
		return nil, err
	}
	qrelsPath, err := firstExisting(dir, "qrels."+split+".txt", filepath.Join("qrels", split+".tsv"))
	if err != nil {
		return nil, err
	}
	var docs []*memory.Memory
	var queries []Case
	var qrels map[string]map[string]int
	var notes []string
	err = withReader(corpusPath, func(r io.Reader) (err error) {
		docs, notes, err = ReadBEIRCorpus(r)
		return err
	})
	if err != nil {
		return nil, err
	}
	err = withReader(queriesPath, func(r io.Reader) (err error) {
		if strings.Contains(filepath.Base(queriesPath), ".jsonl") {
			queries, err = ReadQueriesJSONL(r)
		} else {
			queries, err = ReadQueriesTSV(r)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	err = withReader(qrelsPath, func(r io.Reader) (err error) {
		qrels, err = ReadQrels(r)
		return err
	})
	if err != nil {
		return nil, err
	}
	ds := &Dataset{Name: filepath.Base(filepath.Clean(dir)), Metrics: BEIRMetrics, Notes: notes}
	corpus := Corpus{Name: ds.Name, Docs: docs}
	corpus.Cases, ds.Skipped, ds.Notes = joinQrels(queries, qrels, docs, ds.Notes)
	ds.Corpora = []Corpus{corpus}
	return ds, nil
}

// joinQrels attaches judgements to queries, keeping those with a relevant
// judgement, and notes what did not line up.
func joinQrels(queries []Case, qrels map[string]map[string]int, docs []*memory.Memory, notes []string) ([]Case, int, []string) {
	known := make(map[string]bool, len(docs))
	for _, d := range docs {
		known[d.ID] = true
	}
	var cases []Case
	skipped, missingDocs := 0, 0
	asked := make(map[string]bool, len(queries))
	for _, q := range queries {
		asked[q.ID] = true
		gold := qrels[q.ID]
		relevant := 0
		for id, g := range gold {
			if g > 0 {
				relevant++
				if !known[id] {
					missingDocs++
				}
			}
		}
		if relevant == 0 {
			skipped++
			continue
		}
		q.Gold = gold
		cases = append(cases, q)
	}
	if skipped > 0 {
		notes = append(notes, fmt.Sprintf("%d queries skipped: no relevant judgement in qrels", skipped))
	}
	if missingDocs > 0 {
		notes = append(notes, fmt.Sprintf("%d relevant judgements name documents not in the corpus (kept: recall counts them)", missingDocs))
	}
	var orphan []string
	for qid := range qrels {
		if !asked[qid] {
			orphan = append(orphan, qid)
		}
	}
	if len(orphan) > 0 {
		sort.Strings(orphan)
		notes = append(notes, fmt.Sprintf("%d judged queries missing from the queries file (first %q)", len(orphan), orphan[0]))
	}
	return cases, skipped, notes
}

// ReadBEIRCorpus reads BEIR corpus JSONL. A document with no title and no text is
// dropped and a repeated _id keeps its first document; both are noted.
func ReadBEIRCorpus(r io.Reader) ([]*memory.Memory, []string, error) {
	var docs []*memory.Memory
	seen := map[string]bool{}
	empty, dups := 0, 0
	err := eachLine(r, func(n int, line []byte) error {
		var d struct {
			ID    json.RawMessage `json:"_id"`
			Title string          `json:"title"`
			Text  string          `json:"text"`
		}
		if err := json.Unmarshal(line, &d); err != nil {
			return fmt.Errorf("corpus line %d: %w", n, err)
		}
		id, err := jsonID(d.ID)
		if err != nil {
			return fmt.Errorf("corpus line %d: _id: %w", n, err)
		}
		if seen[id] {
			dups++
			return nil
		}
		seen[id] = true
		title, text := strings.TrimSpace(d.Title), strings.TrimSpace(d.Text)
		if text == "" {
			if title == "" {
				empty++
				return nil
			}
			text, title = title, ""
		}
		docs = append(docs, &memory.Memory{ID: id, Name: title, Text: text})
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	var notes []string
	if empty > 0 {
		notes = append(notes, fmt.Sprintf("%d corpus documents with no title or text dropped", empty))
	}
	if dups > 0 {
		notes = append(notes, fmt.Sprintf("%d repeated corpus ids ignored (first kept)", dups))
	}
	return docs, notes, nil
}

// ReadQueriesTSV reads "qid<TAB>text" lines. Blank lines are ignored.
func ReadQueriesTSV(r io.Reader) ([]Case, error) {
	var out []Case
	seen := map[string]bool{}
	err := eachLine(r, func(n int, line []byte) error {
		qid, text, ok := strings.Cut(string(line), "\t")
		qid, text = strings.TrimSpace(qid), strings.TrimSpace(text)
		if !ok || qid == "" || text == "" {
			return fmt.Errorf("queries line %d: want \"qid<TAB>text\", got %q", n, truncate(string(line), 60))
		}
		if seen[qid] {
			return fmt.Errorf("queries line %d: query id %q repeated", n, qid)
		}
		seen[qid] = true
		out = append(out, Case{ID: qid, Text: text})
		return nil
	})
	return out, err
}

// ReadQueriesJSONL reads BEIR queries JSONL: one {"_id", "text"} object a line.
func ReadQueriesJSONL(r io.Reader) ([]Case, error) {
	var out []Case
	seen := map[string]bool{}
	err := eachLine(r, func(n int, line []byte) error {
		var q struct {
			ID   json.RawMessage `json:"_id"`
			Text string          `json:"text"`
		}
		if err := json.Unmarshal(line, &q); err != nil {
			return fmt.Errorf("queries line %d: %w", n, err)
		}
		id, err := jsonID(q.ID)
		if err != nil {
			return fmt.Errorf("queries line %d: _id: %w", n, err)
		}
		if strings.TrimSpace(q.Text) == "" {
			return fmt.Errorf("queries line %d: query %q has no text", n, id)
		}
		if seen[id] {
			return fmt.Errorf("queries line %d: query id %q repeated", n, id)
		}
		seen[id] = true
		out = append(out, Case{ID: id, Text: strings.TrimSpace(q.Text)})
		return nil
	})
	return out, err
}

// ReadQrels reads relevance judgements: TREC lines "qid iter docid grade", or
// BEIR TSV lines "qid docid grade" after a "query-id" header. A repeated
// (qid, docid) pair keeps the last grade, as trec_eval does.
func ReadQrels(r io.Reader) (map[string]map[string]int, error) {
	out := map[string]map[string]int{}
	err := eachLine(r, func(n int, line []byte) error {
		f := strings.Fields(string(line))
		if n == 1 && len(f) > 0 && strings.EqualFold(f[0], "query-id") {
			return nil
		}
		var qid, doc, grade string
		switch len(f) {
		case 4:
			qid, doc, grade = f[0], f[2], f[3]
		case 3:
			qid, doc, grade = f[0], f[1], f[2]
		default:
			return fmt.Errorf("qrels line %d: want \"qid 0 docid grade\", got %q", n, truncate(string(line), 60))
		}
		g, err := strconv.Atoi(grade)
		if err != nil {
			return fmt.Errorf("qrels line %d: grade %q: %w", n, grade, err)
		}
		if out[qid] == nil {
			out[qid] = map[string]int{}
		}
		out[qid][doc] = g
		return nil
	})
	return out, err
}

// jsonID accepts a JSON string or number as an id.
func jsonID(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", errors.New("missing")
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		if s = strings.TrimSpace(s); s == "" {
			return "", errors.New("empty")
		}
		return s, nil
	}
	var num json.Number
	if err := json.Unmarshal(raw, &num); err != nil {
		return "", fmt.Errorf("want a string or number, got %s", truncate(string(raw), 30))
	}
	return num.String(), nil
}

// eachLine calls fn with every non-blank line (numbered from 1), without its
// line ending, however long the line is.
func eachLine(r io.Reader, fn func(n int, line []byte) error) error {
	br := bufio.NewReaderSize(r, 1<<16)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if t := bytes.TrimRight(line, "\r\n"); len(bytes.TrimSpace(t)) > 0 {
				if ferr := fn(n, t); ferr != nil {
					return ferr
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
	}
}

// withReader opens path, transparently un-gzipping it, and hands it to fn.
func withReader(path string, fn func(io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	var r io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%s: gzip: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	if err := fn(r); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// firstExisting returns the first of names that exists under dir.
func firstExisting(dir string, names ...string) (string, error) {
	for _, n := range names {
		p := filepath.Join(dir, n)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: none of %s found: %w", dir, strings.Join(names, ", "), os.ErrNotExist)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
