// Package postgres holds Tavern's PostgreSQL schema as numbered goose SQL
// files, the twins of the SQLite migrations one directory up: the same
// version numbers, the same tables, columns and indexes (internal/pgdb's
// schema-parity test compares them), written for PostgreSQL. internal/pgdb
// applies them when it opens a database.
//
// What differs, on purpose: times and JSON stay TEXT (replays give the
// bytes the live frames carried), flags are BOOLEAN, ids are identity
// columns, and the memories' full-text index is a generated tsvector
// column (memories.search) with a GIN index instead of SQLite's FTS5
// table.
package postgres

import "embed"

// FS holds every *.sql migration of this directory. It is read-only and safe
// for concurrent use.
//
//go:embed *.sql
var FS embed.FS
