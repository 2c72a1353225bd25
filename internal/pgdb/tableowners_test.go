package pgdb_test

import (
	"testing"

	"tavern/internal/store/storetest"
)

// TestTableOwnersContract runs the contract of the table owner's side on
// PostgreSQL, as internal/db runs it on SQLite.
func TestTableOwnersContract(t *testing.T) {
	storetest.RunTableOwners(t, func(t *testing.T) storetest.TableOwnersStore { return open(t) })
}
