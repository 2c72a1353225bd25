package pgdb_test

import (
	"testing"

	"tavern/internal/store/storetest"
)

// TestAlertsContract runs the suite's alert history cases on PostgreSQL.
func TestAlertsContract(t *testing.T) {
	storetest.RunAlerts(t, func(t *testing.T) storetest.AlertStore { return open(t) })
}
