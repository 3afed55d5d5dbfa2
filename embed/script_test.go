package embed

import (
	"strings"
	"testing"
	"unicode"
)

func TestScriptsUnread(t *testing.T) {
	cjk := Scripts{unicode.Latin, unicode.Han}
	cases := []struct {
		name string
		s    Scripts
		text string
		want string
	}{
		{"english", Latin, "why does the first query fail on cold start?", ""},
		{"accents", Latin, "Crème brûlée für Ångström", ""},
		{"identifier", Latin, "SEAMLESS_DATA_DIR tasks_claim", ""},
		{"no letters", Latin, "42 + 7 = 49 ... ???", ""},
		{"empty", Latin, "", ""},
		{"chinese", Latin, "如何在 MySQL 中创建只读用户？", "Han"},
		{"chinese with more english", Latin, "配置 nginx reverse proxy timeouts", ""},
		{"japanese kana", Latin, "ひらがなとカタカナ", "Hiragana"},
		{"korean", Latin, "데이터베이스 연결 풀 설정", "Hangul"},
		{"russian", Latin, "как настроить обратный прокси", "Cyrillic"},
		{"a tie is read", Latin, "ab 中", ""},
		{"one character past a tie", Latin, "ab 中文", "Han"},
		{"a model that reads Han", cjk, "如何在 MySQL 中创建只读用户？", ""},
		{"a model that reads Han, not Hangul", cjk, "데이터베이스", "Hangul"},
		{"ethiopic is other", Latin, "ሰላም ሰላም", "other"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.s.Unread(c.text); got != c.want {
				t.Errorf("Unread(%q) = %q, want %q", c.text, got, c.want)
			}
		})
	}
}

// TestUnreadEmbedder: an embedder that does not say which scripts it
// reads reads all of them.
func TestUnreadEmbedder(t *testing.T) {
	served := Func{ModelID: "served"}
	if got := Unread(served, "如何创建只读用户"); got != "" {
		t.Errorf("an embedder without Reader: Unread = %q, want \"\"", got)
	}
	if got := Share(served, "如何创建只读用户"); got != 1 {
		t.Errorf("an embedder without Reader: Share = %v, want 1", got)
	}
}

// unreadReference is Scripts.Unread as it was before its byte loop and
// early stop: a plain loop that counts every rune, what
// TestUnreadMatchesReference and FuzzScriptsUnread check it against (a
// letter's weight and script, weigh, and the naming of the script from the
// counts, mostUnread, are shared: the counting is what is checked).
func unreadReference(s Scripts, text string) string {
	read, unread, counts := tallyReference(s, text)
	if unread <= read {
		return ""
	}
	return mostUnread(&counts)
}

// shareReference is Scripts.Share by the same plain loop.
func shareReference(s Scripts, text string) float64 {
	read, unread, _ := tallyReference(s, text)
	if read+unread == 0 {
		return 1
	}
	return float64(read) / float64(read+unread)
}

// tallyReference counts text's letters s reads and does not, and the
// unread ones by scriptNames entry ("other" last), a rune at a time.
func tallyReference(s Scripts, text string) (read, unread int, counts [16]int) {
	for _, r := range text {
		if !unicode.IsLetter(r) {
			continue
		}
		if r < 0x80 {
			if s.reads(unicode.Latin, r) {
				read++
			} else {
				unread++
				counts[len(scriptNames)-1]++
			}
			continue
		}
		w, k := weigh(r)
		if s.reads(nil, r) {
			read += w
		} else {
			unread += w
			counts[k] += w
		}
	}
	return read, unread, counts
}

// readers are the Scripts the differential tests run: with Latin (the ASCII
// path), with Han beside it, and without Latin (ASCII letters looked up).
var readers = []Scripts{Latin, {unicode.Latin, unicode.Han}, {unicode.Han}, {unicode.Cyrillic, unicode.Greek}}

// TestUnreadMatchesReference: the fast path and its early stop give the
// plain loop's answer, on texts whose outcome turns late.
func TestUnreadMatchesReference(t *testing.T) {
	texts := []string{
		"", "a", "中", "a中", "ab 中", "ab 中文", "ab 中文 c", "abc 中文",
		strings.Repeat("x", 50) + strings.Repeat("中", 25),
		strings.Repeat("x", 50) + strings.Repeat("中", 26),
		strings.Repeat("中", 26) + strings.Repeat("x", 52),
		strings.Repeat("é", 10) + strings.Repeat("д", 11),
		"SEAMLESS_DATA_DIR 如何在 MySQL 中创建只读用户？",
		"\xff\xfe abc \xc3", "Ωmega δelta", "seven77", "eight888", "exactly sixteen!", "sixteen bytes + é", "fifteen bytes é", strings.Repeat("데이터 ", 30) + strings.Repeat("data ", 30),
	}
	for i, s := range readers {
		for _, text := range texts {
			if got, want := s.Unread(text), unreadReference(s, text); got != want {
				t.Errorf("readers[%d]: Unread(%q) = %q, the reference %q", i, text, got, want)
			}
			checkShare(t, s, text)
		}
	}
}

// checkShare holds s.Share(text) to the plain loop's, and to Unread: a
// text is read exactly when at least half of it is.
func checkShare(t *testing.T, s Scripts, text string) {
	t.Helper()
	got := s.Share(text)
	if want := shareReference(s, text); got != want {
		t.Fatalf("%v: Share(%q) = %v, the reference %v", s, text, got, want)
	}
	if read := s.Unread(text) == ""; read != (got >= 0.5) {
		t.Fatalf("Share(%q) = %v, yet Unread says read %v", text, got, read)
	}
}

func TestScriptsShare(t *testing.T) {
	cases := []struct {
		name string
		s    Scripts
		text string
		want float64
	}{
		{"english", Latin, "why does the first query fail on cold start?", 1},
		{"no letters", Latin, "42 + 7", 1},
		{"chinese", Latin, "如何创建", 0},
		{"a tie", Latin, "ab 中", 0.5},
		// Kubernetes, Ingress, TLS: 20 letters; 的怎么设置: 5 characters of 2
		{"mixed question", Latin, "Kubernetes 的 Ingress 怎么设置 TLS？", 20.0 / 30},
		{"reads Han too", Scripts{unicode.Latin, unicode.Han}, "Kubernetes 的 Ingress 怎么设置 TLS？", 1},
		{"accents are Latin", Latin, "Crème brûlée", 1},
		{"greek in english", Latin, "TNF-α levels", 9.0 / 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.s.Share(c.text); got != c.want {
				t.Errorf("Share(%q) = %v, want %v", c.text, got, c.want)
			}
			checkShare(t, c.s, c.text)
		})
	}
}

func FuzzScriptsUnread(f *testing.F) {
	for _, s := range []string{"", "abc", "如何在 MySQL", "\xff\xfe", strings.Repeat("데", 100), "ab 中文", "Ωδ abc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for i, s := range readers {
			if got, want := s.Unread(text), unreadReference(s, text); got != want {
				t.Fatalf("readers[%d]: Unread(%q) = %q, the reference %q", i, text, got, want)
			}
			checkShare(t, s, text)
		}
		got := Latin.Unread(text)
		if got != "" && got != "other" && got != "Latin" {
			for _, sn := range scriptNames {
				if sn.name == got {
					return
				}
			}
			t.Fatalf("Unread(%q) = %q: not a script name", text, got)
		}
		if got == "Latin" {
			t.Fatalf("Unread(%q) = Latin for a reader of Latin", text)
		}
	})
}
