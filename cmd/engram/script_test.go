package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnreadScript (issue 28): the built-in English model does not read
// Chinese. A Chinese prompt skips the vector leg and says so, so it is held
// to the keyword-only bar: an absent topic delivers nothing (its vector
// scored every Chinese memory alike, above the bar) and a keyword match is
// still delivered; an English prompt leaves the Chinese memories' cosines
// out and says how many.
func TestUnreadScript(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "")
	t.Setenv("ENGRAM_SCOPE", "")
	t.Setenv("ENGRAM_URL", "")
	db := filepath.Join(t.TempDir(), "zh.db")
	for _, m := range []string{
		"在 MySQL 中创建只读用户：CREATE USER 后只授予 SELECT 权限。",
		"Redis 缓存的过期时间设置为一小时，避免内存占满。",
		"数据库迁移前先备份，迁移脚本放在 migrations 目录。",
		"The deploy script pushes the image to the staging registry.",
	} {
		mustCLI(t, db, "", "add", m)
	}
	type response struct {
		Strategy string
		Degraded []struct{ Stage, Reason string }
		Results  []struct{ Text string }
	}
	search := func(q string) response {
		var r response
		if err := json.Unmarshal([]byte(mustCLI(t, db, "", "search", q, "--json", "--no-record")), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	cases := []struct {
		name, prompt string
		strategy     string
		said         string // in degraded
		deliver      string // what inject delivers ("" nothing)
	}{
		{"chinese, absent topic", "如何配置 Nginx 反向代理？", "bm25",
			"does not read this query's script (Han): the vector leg was skipped", ""},
		{"chinese, keyword match", "如何在 MySQL 中创建只读用户？", "bm25",
			"does not read this query's script (Han): the vector leg was skipped", "只授予 SELECT 权限"},
		{"english", "how does the deploy script push the image", "hybrid",
			"3 candidates written in a script model all-minilm-l6-v2", "staging registry"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := search(c.prompt)
			if said := fmt.Sprint(r.Degraded); r.Strategy != c.strategy || !strings.Contains(said, c.said) {
				t.Errorf("strategy %s, degraded %s; want %s and %q", r.Strategy, said, c.strategy, c.said)
			}
			got := strings.TrimSpace(mustCLI(t, db, "", "inject", c.prompt, "--no-record"))
			switch {
			case c.deliver == "" && got != "":
				t.Errorf("inject delivered %q, want nothing", got)
			case c.deliver != "" && !strings.Contains(got, c.deliver):
				t.Errorf("inject delivered %q, want the memory with %q", got, c.deliver)
			case strings.Count(got, "\n- ") > 0:
				t.Errorf("inject delivered more than one memory: %q", got)
			}
		})
	}
}
