//go:build !unix

package db

import "os"

// flock is a no-op where flock does not exist: no single-writer guard.
func flock(*os.File) error { return nil }
