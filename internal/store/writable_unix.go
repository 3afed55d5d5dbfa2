//go:build unix

package store

import "syscall"

// writable reports whether this process may write the file or directory at
// p, as the kernel decides it (permissions, a read-only mount).
func writable(p string, _ bool) bool { return syscall.Access(p, 2 /* W_OK */) == nil }
