//go:build !unix

package store

import "os"

// writable reports whether this process may write the file at p: whether it
// opens for writing (Windows keeps no write permission on directories that
// stops creating files in them, so a directory counts as writable).
func writable(p string, dir bool) bool {
	if dir {
		return true
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return false
	}
	f.Close()
	return true
}
