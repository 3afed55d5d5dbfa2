//go:build !unix

package main

import "net"

// daemonDir: no local daemon socket on this system; every command runs
// in-process (or through $ENGRAM_URL).
func daemonDir(bool) (string, error) { return "", nil }

// listenDaemon: no local daemon socket on this system.
func listenDaemon(string) (net.Listener, string, error) { return nil, "", nil }
