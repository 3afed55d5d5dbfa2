package store

import (
	"context"
	"errors"
	"fmt"
)

// errNoVersion: this handle keeps no connection for Version.
var errNoVersion = errors.New("read data version: the connection pool is bounded")

// Version identifies the file's committed state as one connection sees it:
// two equal Versions mean no transaction committed to the file in between,
// from this process or another. Its zero value equals no Version Store.Version
// returns.
type Version struct {
	conn uint64 // which kept connection read n (1, 2, ...)
	n    int64  // PRAGMA data_version on that connection
}

// Version reads the file's Version: SQLite's data_version, on a connection
// kept for it that never writes (a connection's own commits do not change
// its number), so that a reader can tell in one cheap statement whether
// anything it derived from the file is still current.
func (s *Store) Version(ctx context.Context) (Version, error) {
	s.verMu.Lock()
	defer s.verMu.Unlock()
	return s.versionLocked(ctx)
}

func (s *Store) versionLocked(ctx context.Context) (Version, error) {
	if s.verConn == nil {
		if s.db.Stats().MaxOpenConnections != 0 {
			// A bounded pool (tests bound it to one) could be drained by
			// the kept connection.
			return Version{}, errNoVersion
		}
		c, err := s.db.Conn(ctx)
		if err != nil {
			return Version{}, fmt.Errorf("read data version: %w", err)
		}
		stmt, err := c.PrepareContext(ctx, `PRAGMA data_version`)
		if err != nil {
			c.Close()
			return Version{}, fmt.Errorf("read data version: %w", err)
		}
		s.verConn, s.verStmt = c, stmt
		s.verGen++
		s.settings = nil
	}
	var n int64
	if err := s.verStmt.QueryRowContext(ctx).Scan(&n); err != nil {
		s.dropVersionConn()
		return Version{}, fmt.Errorf("read data version: %w", err)
	}
	return Version{conn: s.verGen, n: n}, nil
}

// dropVersionConn returns the kept connection to the pool; the caller holds
// verMu. The next Version keeps another.
func (s *Store) dropVersionConn() {
	if s.verConn == nil {
		return
	}
	s.verStmt.Close()
	s.verConn.Close()
	s.verConn, s.verStmt = nil, nil
}

// cachedSetting is a setting as read at a Version.
type cachedSetting struct {
	at    Version
	value string
	ok    bool
}
