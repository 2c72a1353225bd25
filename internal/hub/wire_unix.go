//go:build unix

package hub

import "syscall"

// canWriteFD: the wire may write a socket's descriptor itself, without
// waiting (tryFlush).
const canWriteFD = true

// errWouldBlock is what a write to a full non-blocking socket returns.
const errWouldBlock = syscall.EAGAIN

func writeFD(fd uintptr, p []byte) (int, error) { return syscall.Write(int(fd), p) }
