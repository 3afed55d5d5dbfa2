//go:build unix

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// daemonDir is the user's private directory for daemon sockets:
// $XDG_RUNTIME_DIR/engram, else engram-UID in the temporary directory. It
// must be a directory (not a link) that this user owns and nobody else can
// enter; otherwise it is not used, by a daemon or by a client. create makes
// it (mode 0700) when it is missing.
func daemonDir(create bool) (string, error) {
	dir := filepath.Join(os.TempDir(), "engram-"+strconv.Itoa(os.Getuid()))
	if x := os.Getenv("XDG_RUNTIME_DIR"); x != "" && filepath.IsAbs(x) {
		dir = filepath.Join(x, "engram")
	}
	if create {
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("daemon socket directory: %w", err)
		}
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("daemon socket directory: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return "", fmt.Errorf("daemon socket directory %s is not a directory", dir)
	case !ok || int(st.Uid) != os.Getuid():
		return "", fmt.Errorf("daemon socket directory %s is not owned by this user", dir)
	case fi.Mode().Perm()&0o077 != 0:
		return "", fmt.Errorf("daemon socket directory %s is open to other users (mode %v)", dir, fi.Mode().Perm())
	}
	return dir, nil
}

// listenDaemon listens on the socket of the store key, mode 0600 in the
// private directory. A socket left by a daemon that is gone is replaced; one
// whose daemon answers is an error.
func listenDaemon(key string) (net.Listener, string, error) {
	dir, err := daemonDir(true)
	if err != nil {
		return nil, "", err
	}
	sock := daemonSocket(dir, key)
	if _, err := os.Lstat(sock); err == nil {
		if c, err := net.DialTimeout("unix", sock, daemonProbeTimeout); err == nil {
			c.Close()
			return nil, "", fmt.Errorf("another daemon already listens on %s for this store", sock)
		}
		if err := os.Remove(sock); err != nil {
			return nil, "", fmt.Errorf("remove stale socket: %w", err)
		}
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, "", err
	}
	if err := os.Chmod(sock, 0o600); err != nil {
		ln.Close()
		return nil, "", fmt.Errorf("socket %s: %w", sock, err)
	}
	return ln, sock, nil
}
