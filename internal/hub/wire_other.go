//go:build !unix

package hub

import "syscall"

// canWriteFD: elsewhere every burst goes through the connection's own
// (waiting) Write, from the client's writer goroutine.
const canWriteFD = false

const errWouldBlock = syscall.Errno(0)

func writeFD(uintptr, []byte) (int, error) { return 0, syscall.EINVAL }
