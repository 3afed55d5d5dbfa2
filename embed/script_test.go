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
	if got := Unread(Func{ModelID: "served"}, "如何创建只读用户"); got != "" {
		t.Errorf("an embedder without Reader: Unread = %q, want \"\"", got)
	}
}

func FuzzScriptsUnread(f *testing.F) {
	for _, s := range []string{"", "abc", "如何在 MySQL", "\xff\xfe", strings.Repeat("데", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
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
