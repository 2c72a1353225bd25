package dataset_test

import (
	"context"
	"testing"

	"tavern/internal/dataset"
	"tavern/internal/dataset/datasettest"
)

// mustOpen seeds a database and opens a Dataset on it.
func mustOpen(tb testing.TB) (*dataset.Dataset, string) {
	tb.Helper()
	path := datasettest.MustSeed(tb)
	d, err := dataset.Open(context.Background(), path)
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	tb.Cleanup(func() {
		if err := d.Close(); err != nil {
			tb.Errorf("close: %v", err)
		}
	})
	return d, path
}

func TestDescribe(t *testing.T) {
	d, _ := mustOpen(t)
	desc, err := d.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Log(desc.Text())
}
