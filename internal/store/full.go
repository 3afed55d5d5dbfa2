package store

import (
	"errors"
	"fmt"
	"syscall"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrFull is matched (errors.Is) by a write that failed because the disk
// holding the store (or its quota) is full: SQLite's SQLITE_FULL, or ENOSPC
// from the system. The write's transaction was rolled back: nothing of it
// is stored, and the same write succeeds once there is room.
var ErrFull = errors.New("the store's disk is full")

// markFull returns err with ErrFull in its chain when it says the disk is
// full, else err unchanged.
func markFull(err error) error {
	if err == nil || errors.Is(err, ErrFull) {
		return err
	}
	var se *sqlite.Error
	// The primary code is the low byte (extended codes add the high ones).
	if (errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL) || errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("%w: %w", ErrFull, err)
	}
	return err
}
