package db

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrLocked is returned by Lock when another process (or another Lock in
// this one) holds the database file.
var ErrLocked = errors.New("db: the database is in use by another server")

// Lock takes the single-writer lock of the database file at path: an
// exclusive lock (flock) on path+".lock", which records the holder's pid
// and host. Two servers on one SQLite file would load and play the same
// tables with nothing to fence them (DESIGN.md "Beyond one machine"), so
// a server takes it before Open and holds it until it has closed the DB.
// Open itself does not take it: tools and tests may open the file beside
// a server. It returns an error wrapping ErrLocked, naming the holder,
// when the lock is held; the lock goes when the holder exits, even by a
// crash. unlock releases it; it is safe to call twice.
func Lock(path string) (unlock func() error, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("lock db %s: %w", path, err)
	}
	name := path + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		// The lock file sits beside the database: a directory it cannot
		// be made in cannot take the database's -wal either.
		return nil, fmt.Errorf("lock db: %w", unwritable(path, err))
	}
	if err := flock(f); err != nil {
		f.Close()
		return nil, lockError(path, name, err)
	}
	host, _ := os.Hostname()
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+" on "+host+"\n"), 0)
	}
	var once bool
	return func() error {
		if once {
			return nil
		}
		once = true
		// The file stays: removing it would let a third process lock a new
		// file while a second still waits on the old one.
		return f.Close()
	}, nil
}

// lockError is Lock's error when flock on lock file name fails with err:
// only ErrLocked means another process holds it, and then the error names
// that process; any other failure is reported as itself.
func lockError(path, name string, err error) error {
	if !errors.Is(err, ErrLocked) {
		return fmt.Errorf("lock db %s (lock file %s): %w", path, name, err)
	}
	holder, _ := os.ReadFile(name)
	who := strings.TrimSpace(string(holder))
	if who == "" {
		who = "unknown"
	}
	return fmt.Errorf("%w: %s is held by process %s (lock file %s); stop that server first, or give this one another -db", ErrLocked, path, who, name)
}
