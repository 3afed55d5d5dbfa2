package main

import (
	"database/sql"
	"fmt"
)

// setUserVersion sets a database's schema version, as a newer engram would.
func setUserVersion(path string, v int) error {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec(fmt.Sprintf("PRAGMA user_version = %d", v))
	return err
}
