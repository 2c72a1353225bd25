package db_test

import (
	"context"
	"path/filepath"
	"testing"

	"tavern/internal/db"
	"tavern/internal/store/storetest"
)

// TestFaultsContract runs the contract of a store that cannot write on
// SQLite: a cap on the file's pages fails writes as a full disk does.
func TestFaultsContract(t *testing.T) {
	storetest.RunFaults(t, storetest.Faults{
		Open: func(t *testing.T) storetest.FaultStore {
			d, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "tavern.db"))
			if err != nil {
				t.Fatal(err)
			}
			return d
		},
		Break: func(t *testing.T, s storetest.FaultStore) {
			d := s.(*db.DB)
			pages, err := d.PageCount(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if err := d.SetMaxPages(context.Background(), pages); err != nil {
				t.Fatal(err)
			}
		},
		Heal: func(t *testing.T, s storetest.FaultStore) {
			if err := s.(*db.DB).SetMaxPages(context.Background(), 0); err != nil {
				t.Fatal(err)
			}
		},
	})
}
