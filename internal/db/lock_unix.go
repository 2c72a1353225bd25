//go:build unix

package db

import (
	"errors"
	"os"
	"syscall"
)

// flock takes an exclusive lock on f without waiting; ErrLocked if it is
// held.
func flock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrLocked
	}
	return err
}
