// Package migrations holds Tavern's SQLite schema as numbered goose SQL
// files (NNNN_name.sql, "-- +goose Up" / "-- +goose Down"), embedded in the
// binary. internal/db applies them in order when it opens a database; start
// with 0001_init.sql for the tables and what they hold.
package migrations

import "embed"

// FS holds every *.sql migration of this directory. It is read-only and safe
// for concurrent use.
//
//go:embed *.sql
var FS embed.FS
