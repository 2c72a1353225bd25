package db

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestLockRefusesASecondHolder: while one holds the lock, a second Lock on
// the same file fails naming the holder's pid; once released, it succeeds.
func TestLockRefusesASecondHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tavern.db")
	unlock, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Lock(path)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Lock = %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), "process "+strconv.Itoa(os.Getpid())) {
		t.Errorf("error %q does not name the holder, pid %d", err, os.Getpid())
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	if err := unlock(); err != nil {
		t.Errorf("second unlock = %v", err)
	}
	again, err := Lock(path)
	if err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	again()
}

// TestLockErrorOnlyHeldWhenHeld: a flock that fails for another reason
// than a holder (no locks on this file system, an interrupted call) is
// reported as itself, not as a server holding the file.
func TestLockErrorOnlyHeldWhenHeld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tavern.db")
	name := path + ".lock"
	if err := os.WriteFile(name, []byte("4242 on elsewhere\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	err := lockError(path, name, syscall.ENOLCK)
	if errors.Is(err, ErrLocked) || strings.Contains(err.Error(), "held by") {
		t.Errorf("lockError(ENOLCK) = %v, want no claim that the lock is held", err)
	}
	if !errors.Is(err, syscall.ENOLCK) {
		t.Errorf("lockError(ENOLCK) = %v, want it to wrap ENOLCK", err)
	}
	err = lockError(path, name, ErrLocked)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "process 4242 on elsewhere") {
		t.Errorf("lockError(ErrLocked) = %v, want ErrLocked naming the holder", err)
	}
}
