package db

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
