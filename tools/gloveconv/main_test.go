package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/engram-memory/engram/embed/glove"
	"github.com/engram-memory/engram/embed/glove/vecfile"
)

// fixture is a small file in the package's layout: dim 4, vectors keyed by
// word with the norm and the frequency index appended, and a punctuation
// word the tokenizer cannot produce. Keys are deliberately out of order.
const fixture = `{"precision":8,"l2NormIndex":4,"wordIndex":5,"size":6,"dimensions":4,
"words":["the",",","cat","kitten","dog","revenue"],
"vectors":{
"cat":[0.5,-0.25,1.5,0,1.6007810593582121,2],
"the":[1,0,0,0,1,0],
",":[0,1,0,0,1,1],
"kitten":[0.45,-0.2,1.4,0.1,1.5,3],
"dog":[0.4,0.1,1.2,-0.3,1.3,4],
"revenue":[-2,3,0.125,-0.5,3.7,5]},
"unkVector":[0,0,0,0,-1]}`

func writeTgz(t *testing.T, dir string) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range []struct{ name, body string }{
		{"package/package.json", `{"name":"x"}`},
		{"package/vectors.json", fixture},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, f.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "pkg.tgz")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConvertRoundTrip(t *testing.T) {
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "v.json")
	if err := os.WriteFile(jsonPath, []byte(fixture), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, in string
		words    int
		want     []string
	}{
		{"json, all", jsonPath, 10, []string{"the", "cat", "kitten", "dog", "revenue"}},
		{"tgz, top 3", writeTgz(t, dir), 3, []string{"the", "cat", "kitten"}},
	}
	src := map[string][]float64{
		"the": {1, 0, 0, 0}, "cat": {0.5, -0.25, 1.5, 0}, "kitten": {0.45, -0.2, 1.4, 0.1},
		"dog": {0.4, 0.1, 1.2, -0.3}, "revenue": {-2, 3, 0.125, -0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, "out.bin")
			var stderr bytes.Buffer
			if err := run([]string{"-in", tc.in, "-out", out, "-words", strconv.Itoa(tc.words)}, io.Discard, &stderr); err != nil {
				t.Fatalf("run: %v (%s)", err, stderr.String())
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			f, err := vecfile.Parse(string(b))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(f.Words, " ") != strings.Join(tc.want, " ") || f.Dim != 4 || f.SourceWords != 6 {
				t.Fatalf("words %v dim %d source %d", f.Words, f.Dim, f.SourceWords)
			}
			wantRank := map[string]uint32{"the": 1, "cat": 3, "kitten": 4, "dog": 5, "revenue": 6}
			for i, w := range f.Words {
				if f.Ranks[i] != wantRank[w] {
					t.Errorf("rank of %q = %d, want %d", w, f.Ranks[i], wantRank[w])
				}
				got := f.Dequantize(nil, i)
				for j, x := range src[w] {
					if d := math.Abs(float64(got[j]) - x); d > float64(f.Scales[i])/2+1e-6 {
						t.Errorf("%q[%d] = %v, source %v", w, j, got[j], x)
					}
				}
			}
			for _, k := range []string{"mean", "sif"} {
				if len(f.Components[k]) != 4 {
					t.Errorf("component %q missing", k)
				}
			}
			e, err := glove.NewFromFile(f, glove.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if e.Words() != len(tc.want) {
				t.Errorf("Words() = %d", e.Words())
			}
		})
	}
}

func TestDump(t *testing.T) {
	src, err := readSource(strings.NewReader(fixture))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := dumpWords(&out, src, []string{"cat"}); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out.String()); got != `{"cat":[0.5,-0.25,1.5,0]}` {
		t.Errorf("dump = %s", got)
	}
	if err := dumpWords(io.Discard, src, []string{","}); err == nil {
		t.Error("dump of a non-vocabulary word succeeded")
	}
}

func TestReadSourceRejects(t *testing.T) {
	tests := []struct{ name, data string }{
		{"not an object", `[1,2]`},
		{"ragged rows", `{"dimensions":2,"l2NormIndex":2,"wordIndex":3,"size":2,"vectors":{"a":[1,2,3,0],"b":[1,2,1]}}`},
		{"layout mismatch", `{"dimensions":3,"l2NormIndex":2,"wordIndex":3,"size":2,"vectors":{"a":[1,2,3,0]}}`},
		{"duplicate index", `{"dimensions":2,"l2NormIndex":2,"wordIndex":3,"size":2,"vectors":{"a":[1,2,3,0],"b":[1,2,3,0]}}`},
		{"index beyond size", `{"dimensions":2,"l2NormIndex":2,"wordIndex":3,"size":1,"vectors":{"a":[1,2,3,4]}}`},
		{"truncated", `{"dimensions":2,"vectors":{"a":[1,2`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := readSource(strings.NewReader(tc.data)); err == nil {
				t.Fatal("readSource succeeded")
			}
		})
	}
}
