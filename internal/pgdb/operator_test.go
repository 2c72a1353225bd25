package pgdb_test

import (
	"testing"

	"tavern/internal/store/storetest"
)

// TestOperatorContract runs the suite's operator cases on PostgreSQL.
func TestOperatorContract(t *testing.T) {
	storetest.RunOperator(t, func(t *testing.T) storetest.OperatorStore { return open(t) })
}
