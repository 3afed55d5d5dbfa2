package datephrase

import (
	"strings"
	"testing"
)

// benchText is a query-like text of about n bytes: questions with and without
// dates, in English and Chinese, repeated.
func benchText(n int) string {
	parts := []string{
		"What did Deborah do at the retreat on 9 February, 2023? ",
		"How many times has Joanna found new hiking trails? ",
		"The deployment failed because the database migration timed out after 30 seconds. ",
		"When did Melanie go camping in June 2023, and what did she bring two weeks ago? ",
		"如何在 MySQL 中创建只读用户？上周我们讨论了什么？ ",
		"Set SEAMLESS_DATA_DIR=/var/lib/engram, run cmd/engram/main.go --dry-run in v1.2.3. ",
	}
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(parts[i%len(parts)])
	}
	return b.String()[:n]
}

func BenchmarkFind(b *testing.B) {
	for _, bc := range []struct{ name, text string }{
		{"question_with_date", "What did Deborah do at the yoga retreat on 9 February, 2023?"},    // 60 bytes
		{"question_without_date", "How many times did Joanna find new hiking trails on her own?"}, // 60 bytes
		{"question_zh", "她去年夏天去了哪里？上周我们讨论了什么"},                                                    // 57 bytes
		{"text_100KB", benchText(100 << 10)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.text)))
			for b.Loop() {
				Find(bc.text, friday)
			}
		})
	}
}
