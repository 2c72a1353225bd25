package dataset_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"tavern/internal/dataset"
)

// TestPostgresAnalystShapes asks the offline analyst every question shape
// it knows (each shape's example) on PostgreSQL: their SQL, written for
// SQLite first, must run on the PostgreSQL views as well.
func TestPostgresAnalystShapes(t *testing.T) {
	d, _ := mustOpenPostgres(t)
	a := &dataset.Analyst{Data: d, Now: func() time.Time { return time.Date(2026, 11, 8, 12, 0, 0, 0, time.UTC) },
		Online: func(context.Context) ([]dataset.OnlinePlayer, error) { return nil, nil }}
	for _, s := range dataset.Shapes() {
		_, q, _ := strings.Cut(s, ": ")
		ans, err := a.Ask(context.Background(), q)
		if err != nil {
			t.Errorf("%q: %v", q, err)
			continue
		}
		t.Logf("%q: %+v", q, ans)
	}
}
