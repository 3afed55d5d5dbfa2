package embed

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// checkDecoded is the decoders' contract: an error wraps ErrBadResponse, a
// success has exactly n non-empty vectors.
func checkDecoded(t *testing.T, got [][]float32, err error, n int) {
	t.Helper()
	if err != nil {
		if !errors.Is(err, ErrBadResponse) {
			t.Fatalf("error %v does not wrap ErrBadResponse", err)
		}
		return
	}
	if len(got) != n {
		t.Fatalf("%d vectors for %d texts", len(got), n)
	}
	for i, v := range got {
		if len(v) == 0 {
			t.Fatalf("vector %d empty", i)
		}
	}
}

func FuzzDecodeOpenAI(f *testing.F) {
	f.Add([]byte(`{"data":[{"index":1,"embedding":[2]},{"index":0,"embedding":[1]}]}`), uint8(2))
	f.Add([]byte(`{"data":[{"embedding":[1,2]}]}`), uint8(1))
	f.Add([]byte(`{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}`), uint8(2))
	f.Add([]byte(`{"error":{"message":"x"}}`), uint8(1))
	f.Add([]byte(`{"data":[{"index":-5,"embedding":[]}]}`), uint8(1))
	f.Fuzz(func(t *testing.T, body []byte, n uint8) {
		got, err := decodeOpenAI(body, int(n), "")
		checkDecoded(t, got, err, int(n))
	})
}

func FuzzDecodeOllama(f *testing.F) {
	f.Add([]byte(`{"embeddings":[[1,2],[3,4]]}`), uint8(2))
	f.Add([]byte(`{"embeddings":[[]]}`), uint8(1))
	f.Add([]byte(`{"error":"model not found"}`), uint8(1))
	f.Fuzz(func(t *testing.T, body []byte, n uint8) {
		got, err := decodeOllama(body, int(n))
		checkDecoded(t, got, err, int(n))
	})
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"", "0", "1", "120", "99999999999999999999", "-1", "Wed, 21 Oct 2015 07:28:00 GMT", "soon"} {
		f.Add(s)
	}
	now := time.Date(2015, 10, 21, 7, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := parseRetryAfter(s, now)
		if d < 0 || !ok && d != 0 {
			t.Fatalf("parseRetryAfter(%q) = %s, %v", s, d, ok)
		}
		if ok && strings.Trim(strings.TrimSpace(s), "0123456789") == "" && d > MaxRetryAfter {
			t.Fatalf("seconds not capped: %s", d)
		}
	})
}

// The server's message, whatever it is, ends up short, valid UTF-8, on one
// line and without the key.
func FuzzServerMessage(f *testing.F) {
	f.Add([]byte(`{"error":{"message":"Incorrect API key provided: sk-abc"}}`))
	f.Add([]byte(`{"error":"sk-abc"}`))
	f.Add([]byte("<html>\n\xff</html>"))
	const secret = "sk-abc"
	f.Fuzz(func(t *testing.T, body []byte) {
		m := cleanMessage(serverMessage(body), secret)
		if len(m) > maxErrorMessage+len("…") || !utf8.ValidString(m) || strings.ContainsAny(m, "\n\r\t") {
			t.Fatalf("bad message %q", m)
		}
		if strings.Contains(m, secret) {
			t.Fatalf("secret in %q", m)
		}
	})
}
