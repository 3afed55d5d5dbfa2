package store

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/engram-memory/engram/memory"
)

// TestWriteDiskFull: a write SQLite cannot fit (SQLITE_FULL, as the driver
// returns it when the file may not grow: here PRAGMA max_page_count, as a
// full disk or quota would) fails with ErrFull in its chain and a message
// saying so, writes nothing, and leaves the store readable and writable once
// there is room again.
func TestWriteDiskFull(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	if _, _, err := s.Put(ctx, nil, []*memory.Memory{testMemory("m1")}); err != nil {
		t.Fatal(err)
	}
	// One connection, so the page limit holds for every statement.
	s.db.SetMaxOpenConns(1)
	s.db.SetMaxIdleConns(1)
	var pages int64
	if err := s.db.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, "PRAGMA max_page_count = "+strconv.FormatInt(pages, 10)); err != nil {
		t.Fatal(err)
	}
	big := testMemory("big")
	big.Text = strings.Repeat("a long memory that does not fit ", 2000)
	_, _, err := s.Put(ctx, nil, []*memory.Memory{big})
	if !errors.Is(err, ErrFull) || !strings.Contains(err.Error(), "full") {
		t.Fatalf("a write past the page limit: %v, want ErrFull", err)
	}
	if m := get1(t, s, nil, "big"); m != nil {
		t.Fatal("the failed write left its memory")
	}
	if m := get1(t, s, nil, "m1"); m == nil {
		t.Fatal("the store lost m1")
	}
	if _, err := s.db.ExecContext(ctx, "PRAGMA max_page_count = 1073741823"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Put(ctx, nil, []*memory.Memory{big}); err != nil {
		t.Fatalf("the same write with room: %v", err)
	}
}

// TestFullErrors: what counts as a full disk.
func TestFullErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		full bool
	}{
		{"ENOSPC from the system", &os.PathError{Op: "write", Path: "x.db", Err: syscall.ENOSPC}, true},
		{"another system error", &os.PathError{Op: "write", Path: "x.db", Err: syscall.EIO}, false},
		{"no error", nil, false},
		{"a plain error", errors.New("database or disk is full"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := errors.Is(markFull(c.err), ErrFull); got != c.full {
				t.Fatalf("markFull(%v) is ErrFull: %v, want %v", c.err, got, c.full)
			}
		})
	}
}
