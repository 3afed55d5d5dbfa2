package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// sciFact is the BEIR SciFact test split.
type sciFact struct {
	docIDs  []string
	docs    []string                  // title + " " + text
	queries [][2]string               // qid, text
	qrels   map[string]map[string]int // qid → docid → grade
}

func openMaybeGzip(path string) (io.Reader, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	if !strings.HasSuffix(path, ".gz") {
		return f, f.Close, nil
	}
	gz, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return gz, f.Close, nil
}

func loadSciFact(dir string) (*sciFact, error) {
	sf := &sciFact{qrels: map[string]map[string]int{}}
	r, done, err := openMaybeGzip(filepath.Join(dir, "corpus.jsonl.gz"))
	if err != nil {
		return nil, fmt.Errorf("scifact corpus: %w", err)
	}
	dec := json.NewDecoder(r)
	for dec.More() {
		var d struct {
			ID    string `json:"_id"`
			Title string `json:"title"`
			Text  string `json:"text"`
		}
		if err := dec.Decode(&d); err != nil {
			done()
			return nil, fmt.Errorf("scifact corpus: %w", err)
		}
		sf.docIDs = append(sf.docIDs, d.ID)
		sf.docs = append(sf.docs, d.Title+" "+d.Text)
	}
	done()
	r, done, err = openMaybeGzip(filepath.Join(dir, "queries.test.tsv.gz"))
	if err != nil {
		return nil, fmt.Errorf("scifact queries: %w", err)
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		id, text, ok := strings.Cut(sc.Text(), "\t")
		if ok {
			sf.queries = append(sf.queries, [2]string{id, text})
		}
	}
	done()
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("scifact queries: %w", err)
	}
	r, done, err = openMaybeGzip(filepath.Join(dir, "qrels.test.txt"))
	if err != nil {
		return nil, fmt.Errorf("scifact qrels: %w", err)
	}
	defer done()
	sc = bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 {
			continue
		}
		g, err := strconv.Atoi(f[3])
		if err != nil {
			return nil, fmt.Errorf("scifact qrels line %q: %w", sc.Text(), err)
		}
		if sf.qrels[f[0]] == nil {
			sf.qrels[f[0]] = map[string]int{}
		}
		sf.qrels[f[0]][f[2]] = g
	}
	return sf, sc.Err()
}

// conversation is one LoCoMo sample: its turns are the store, its questions
// with valid evidence the queries.
type conversation struct {
	id        string
	turnIDs   []string
	turns     []string // "speaker: text"
	questions []string
	gold      []map[string]bool
}

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

// loadLoCoMo reads the conversations and reports how many questions it skipped
// for having no evidence that names a turn.
func loadLoCoMo(path string) ([]conversation, int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, fmt.Errorf("locomo: %w", err)
	}
	var samples []struct {
		ID           string                     `json:"sample_id"`
		Conversation map[string]json.RawMessage `json:"conversation"`
		QA           []struct {
			Question string   `json:"question"`
			Evidence []string `json:"evidence"`
		} `json:"qa"`
	}
	if err := json.Unmarshal(b, &samples); err != nil {
		return nil, 0, fmt.Errorf("locomo: %w", err)
	}
	skipped := 0
	var convs []conversation
	for _, s := range samples {
		c := conversation{id: s.ID}
		var sessions []int
		for k := range s.Conversation {
			if m := sessionKey.FindStringSubmatch(k); m != nil {
				n, _ := strconv.Atoi(m[1])
				sessions = append(sessions, n)
			}
		}
		slices.Sort(sessions)
		for _, n := range sessions {
			raw := s.Conversation["session_"+strconv.Itoa(n)]
			var turns []struct {
				Speaker string `json:"speaker"`
				DiaID   string `json:"dia_id"`
				Text    string `json:"text"`
			}
			if err := json.Unmarshal(raw, &turns); err != nil {
				return nil, 0, fmt.Errorf("locomo %s session %d: %w", s.ID, n, err)
			}
			for _, t := range turns {
				c.turnIDs = append(c.turnIDs, t.DiaID)
				c.turns = append(c.turns, t.Speaker+": "+t.Text)
			}
		}
		known := make(map[string]bool, len(c.turnIDs))
		for _, id := range c.turnIDs {
			known[id] = true
		}
		for _, q := range s.QA {
			gold := map[string]bool{}
			for _, e := range q.Evidence {
				if known[e] {
					gold[e] = true
				}
			}
			if len(gold) == 0 {
				skipped++
				continue
			}
			c.questions = append(c.questions, q.Question)
			c.gold = append(c.gold, gold)
		}
		convs = append(convs, c)
	}
	return convs, skipped, nil
}
