package weaviatetest

import "syscall"

// procAttr has the server killed if the test process dies without stopping
// it (a panic, a timeout).
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
