package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/memory"
)

// Claude Code's session transcript (the hook input's transcript_path): JSON
// Lines, one record a line. Records of type "user" and "assistant" carry the
// conversation in the Anthropic Messages shape ("message": {"role",
// "content": a string or a list of blocks}); the rest are state the
// conversation does not need. The turns an episode keeps are the text the
// user typed and the text the assistant wrote: tool calls, tool results,
// thinking, meta records (command expansions) and side chains (sub-agents)
// are left out, and an assistant message written as several records (one a
// content block, sharing message.id) is one turn.

// maxTranscript bounds the transcript a hook reads.
const maxTranscript = 64 << 20

// transcriptRecord is the part of a transcript line the reader needs.
type transcriptRecord struct {
	Type        string `json:"type"`
	IsMeta      bool   `json:"isMeta"`
	IsSidechain bool   `json:"isSidechain"`
	Timestamp   string `json:"timestamp"`
	Message     struct {
		ID      string          `json:"id"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// contentBlock is one block of a message's content list.
type contentBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// readTranscript reads the conversation's turns from a transcript file.
func readTranscript(path string) ([]engram.Message, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	defer f.Close()
	return parseTranscript(io.LimitReader(f, maxTranscript))
}

// parseTranscript reads the turns from transcript lines; a line that is not
// a record it knows is skipped (the format is Claude Code's own, and grows).
func parseTranscript(r io.Reader) ([]engram.Message, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxTranscript)
	var out []engram.Message
	lastID := "" // the assistant message the last turn came from
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var rec transcriptRecord
		if json.Unmarshal(line, &rec) != nil || rec.IsMeta || rec.IsSidechain {
			continue
		}
		if rec.Type != "user" && rec.Type != "assistant" {
			continue
		}
		text := contentText(rec.Message.Content)
		if strings.TrimSpace(text) == "" {
			continue // a tool call or result, thinking, or an empty record
		}
		at, err := time.Parse(time.RFC3339Nano, rec.Timestamp)
		if err != nil || memory.CheckTime("timestamp", at) != nil {
			at = time.Time{} // none, or unreadable: stored as now
		}
		at = at.UTC()
		if rec.Type == "assistant" && rec.Message.ID != "" && rec.Message.ID == lastID && len(out) > 0 {
			out[len(out)-1].Text += "\n" + text
			continue
		}
		lastID = ""
		if rec.Type == "assistant" {
			lastID = rec.Message.ID
		}
		out = append(out, engram.Message{Speaker: rec.Type, Text: text, OccurredAt: at})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	return out, nil
}

// contentText is the text of a message's content: the string itself, or its
// text blocks joined.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []contentBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}
