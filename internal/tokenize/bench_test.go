package tokenize

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

var benchTexts = []struct{ name, text string }{
	{"english", "The deployment failed because the database migration timed out after 30 seconds; " +
		"we increased the timeout, reran the job and confirmed that all of the user records were migrated correctly."},
	{"identifiers", "Set SEAMLESS_DATA_DIR=/var/lib/engram, run cmd/engram/main.go --dry-run; getUserName() " +
		"returns ERR_CONN_RESET in v1.2.3 of memory-search.ts (see tasks_claim and user@example.io)."},
	{"cjk", "如何在 MySQL 中创建只读用户？我们需要为报表系统配置一个只读账号，并限制它只能访问分析数据库。"},
	{"accented", "Le café de la gare a réouvert ; Zoë et Ünal préfèrent le thé — naïve façade, it’s fine."},
}

func BenchmarkTokens(b *testing.B) {
	tk := New(DefaultOptions())
	for _, bt := range benchTexts {
		b.Run(bt.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bt.text)))
			for b.Loop() {
				tk.Tokens(bt.text)
			}
		})
	}
}

// BenchmarkAppendTokens reuses the destination, as an index build does.
func BenchmarkAppendTokens(b *testing.B) {
	tk := New(DefaultOptions())
	for _, bt := range benchTexts {
		b.Run(bt.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bt.text)))
			var dst []string
			for b.Loop() {
				dst = tk.AppendTokens(dst[:0], bt.text)
			}
		})
	}
}

// corpus returns n texts of about 200 bytes in the mix a memory store holds.
func corpus(n int) []string {
	words := strings.Fields(benchTexts[0].text + " memory search index recall ranking vector " +
		"embedding query token stemming cache server client config project agent user session")
	r := rand.New(rand.NewSource(int64(n)))
	out := make([]string, n)
	for i := range out {
		var s strings.Builder
		for s.Len() < 200 {
			switch r.Intn(10) {
			case 0:
				fmt.Fprintf(&s, "task_%d ", r.Intn(5000))
			case 1:
				fmt.Fprintf(&s, "word%d ", r.Intn(20000))
			default:
				s.WriteString(words[r.Intn(len(words))])
				s.WriteByte(' ')
			}
		}
		out[i] = s.String()
	}
	return out
}

// BenchmarkTokensCorpus tokenizes a whole store's texts, as opening a store does;
// ns/op is the time for all n.
func BenchmarkTokensCorpus(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		texts := corpus(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			tk := New(DefaultOptions())
			var dst []string
			for b.Loop() {
				for _, t := range texts {
					dst = tk.AppendTokens(dst[:0], t)
				}
			}
		})
	}
}

// BenchmarkTokensParallel measures the shared cache under concurrent callers.
func BenchmarkTokensParallel(b *testing.B) {
	tk := New(DefaultOptions())
	text := benchTexts[0].text
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var dst []string
		for pb.Next() {
			dst = tk.AppendTokens(dst[:0], text)
		}
	})
}
