package pgdb

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
)

// The operator's data agent reads the database as a role of its own
// (DESIGN.md "Beyond one machine"): it may log in, SELECT the curated
// views (migrations/postgres/0005_data_views.sql) and nothing else, its
// sessions are read-only and every statement is bounded in time.

// dataTimeout is the data role's statement_timeout; each query also sets
// its own (dataset.Dataset.Timeout).
const dataTimeout = "5s"

var unsafeName = regexp.MustCompile(`[^a-z0-9_]`)

// DataRole creates or updates the data agent's role of this database,
// tavern_data_<database>, with password and SELECT on views (the
// curated views' names), and returns the URL the data
// agent connects with (this DB's URL with the role's name and password).
// It needs a connection allowed to create roles (CREATEROLE); every node
// sets the same password, derived from a secret they share.
func (d *DB) DataRole(ctx context.Context, dbURL, password string, views []string) (string, error) {
	cfg := d.pool.Config().ConnConfig
	role := "tavern_data_" + unsafeName.ReplaceAllString(strings.ToLower(cfg.Database), "_")
	if len(role) > 63 {
		role = role[:63]
	}
	ident := pgx.Identifier{role}.Sanitize()
	quoted := make([]string, 0, len(views))
	for _, v := range views {
		quoted = append(quoted, pgx.Identifier{v}.Sanitize())
	}
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		// Roles are the server's, not the database's: two nodes may
		// create it at once; the advisory lock makes them take turns.
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(7306177)"); err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", role).Scan(&exists); err != nil {
			return err
		}
		verb := "ALTER"
		if !exists {
			verb = "CREATE"
		}
		lit := "'" + strings.ReplaceAll(password, "'", "''") + "'"
		stmts := []string{
			fmt.Sprintf("%s ROLE %s LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS CONNECTION LIMIT 8 PASSWORD %s", verb, ident, lit),
			fmt.Sprintf("ALTER ROLE %s SET default_transaction_read_only = on", ident),
			fmt.Sprintf("ALTER ROLE %s SET statement_timeout = '%s'", ident, dataTimeout),
			fmt.Sprintf("ALTER ROLE %s SET idle_in_transaction_session_timeout = '10s'", ident),
			fmt.Sprintf("GRANT CONNECT ON DATABASE %s TO %s", pgx.Identifier{cfg.Database}.Sanitize(), ident),
			fmt.Sprintf("GRANT USAGE ON SCHEMA public TO %s", ident),
			fmt.Sprintf("REVOKE ALL ON ALL TABLES IN SCHEMA public FROM %s", ident),
			fmt.Sprintf("GRANT SELECT ON %s TO %s", strings.Join(quoted, ", "), ident),
		}
		for _, q := range stmts {
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", strings.SplitN(q, " PASSWORD", 2)[0], err)
			}
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("the data agent's role %s: %w", role, err)
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		return "", errors.New("the data agent's role: the database URL does not parse")
	}
	u.User = url.UserPassword(role, password)
	return u.String(), nil
}
