package dataset_test

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"tavern/internal/dataset"
	"tavern/internal/dataset/datasettest"
)

// bigCell is the size of the cell that once went whole into a stored
// conversation and the model's prompt: SQLite's length limit.
const bigCell = 16 << 20

func mustOpenBig(tb testing.TB, n int) *dataset.Dataset {
	tb.Helper()
	path := datasettest.MustSeed(tb)
	datasettest.MustSetBigName(tb, path, n)
	d, err := dataset.Open(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { d.Close() })
	return d
}

// TestQueryCutsABigCell reads a 16 MiB cell: the result holds its first
// 64 KiB (whole characters) and says what was cut.
func TestQueryCutsABigCell(t *testing.T) {
	d := mustOpenBig(t, bigCell)
	r, err := d.Query(context.Background(), "SELECT table_id, name FROM v_tables ORDER BY table_id")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 3 || !r.Truncated || r.RowsCut != "" {
		t.Fatalf("rows %d, truncated %v, rows cut %q; want 3, true, none", len(r.Rows), r.Truncated, r.RowsCut)
	}
	name, _ := r.Rows[0][1].(string)
	// The cut at 65,536 bytes splits the "é" at 65,536–65,537: it goes.
	want := datasettest.BigName(bigCell)[:dataset.MaxCellBytes-1]
	if name != want {
		t.Errorf("cut cell: %d bytes ending %q; want %d bytes of a", len(name), name[max(0, len(name)-8):], len(want))
	}
	if r.Rows[1][1] != "Greyhollow B" {
		t.Errorf("second row %v; want it whole", r.Rows[1])
	}
	wantCut := dataset.CellCut{Row: 0, Column: 1, Bytes: bigCell, Shown: dataset.MaxCellBytes - 1, Marker: "…[cut: 16,777,216 bytes, showing 65,535]"}
	if len(r.Cut) != 1 || r.Cut[0] != wantCut {
		t.Errorf("cut %+v; want [%+v]", r.Cut, wantCut)
	}
	if n := size(t, r); n > dataset.MaxResultBytes {
		t.Errorf("result is %d bytes of JSON; want at most %d", n, dataset.MaxResultBytes)
	}
	text := r.Text(20, 64<<10)
	if !strings.Contains(text, "…[cut: 16,777,216 bytes, showing 4,096]") || len(text) > 64<<10 {
		t.Errorf("text for the model (%d bytes) lacks the marker or is too long: %.200q", len(text), text)
	}
	step := dataset.QueryStep(r.SQL, "", r, nil)
	if len(step.Cut) != 1 || !step.Truncated {
		t.Errorf("step cut %v, truncated %v; want the result's", step.Cut, step.Truncated)
	}
}

// TestQueryCutsAWholeResult asks for 500 rows of 64 KiB: the rows stop
// at MaxResultBytes, and the result says so. Each row reads its cell
// whole before cutting it, so the cell is 128 KiB here and the deadline
// far (the test asserts no time).
func TestQueryCutsAWholeResult(t *testing.T) {
	d := mustOpenBig(t, 128<<10)
	d.Timeout = time.Minute
	r, err := d.Query(context.Background(), "SELECT v_tables.name FROM v_tables, v_events WHERE v_tables.table_id = 't1'")
	if err != nil {
		t.Fatal(err)
	}
	if !r.Truncated || r.RowsCut != dataset.CutBytes {
		t.Errorf("truncated %v, rows cut %q; want true, %q", r.Truncated, r.RowsCut, dataset.CutBytes)
	}
	if n := size(t, r); n > dataset.MaxResultBytes+64<<10 || len(r.Rows) < 20 {
		t.Errorf("%d rows in %d bytes; want about %d bytes", len(r.Rows), n, dataset.MaxResultBytes)
	}
	if len(r.Cut) != len(r.Rows) {
		t.Errorf("%d cuts for %d rows; want one each", len(r.Cut), len(r.Rows))
	}
	if text := r.Text(20, 64<<10); !strings.Contains(text, "cut at 2,097,152 bytes") || len(text) > 64<<10 {
		t.Errorf("text for the model (%d bytes) does not say the rows were cut: %.200q", len(text), text)
	}
}

func TestThousands(t *testing.T) {
	r := &dataset.Result{Columns: []string{"x"}, Rows: [][]any{{strings.Repeat("x", 5000)}}}
	if got := r.Text(1, 0); !strings.Contains(got, "…[cut: 5,000 bytes, showing 4,096]") {
		t.Errorf("text %.80q… lacks the marker", got[len(got)-60:])
	}
}

func size(t *testing.T, r *dataset.Result) int {
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// BenchmarkQueryBigCell reports the heap a query of a 16 MiB cell leaves
// in use (heap-B: HeapInuse after GC, the result held) besides its cost.
func BenchmarkQueryBigCell(b *testing.B) {
	d := mustOpenBig(b, bigCell)
	ctx := context.Background()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapInuse
	var r *dataset.Result
	for b.Loop() {
		var err error
		if r, err = d.Query(ctx, "SELECT * FROM v_tables"); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(int64(ms.HeapInuse)-int64(before)), "heap-B")
	runtime.KeepAlive(r)
}

// TestReplyBound keeps the newest steps' rows within the bound and
// marks the older ones as cut.
func TestReplyBound(t *testing.T) {
	big := [][]any{{strings.Repeat("x", 900<<10)}}
	r := dataset.Reply{Steps: []dataset.Step{
		{Kind: dataset.StepQuery, Columns: []string{"x"}, Rows: big},
		{Kind: dataset.StepChart},
		{Kind: dataset.StepQuery, Columns: []string{"x"}, Rows: big},
		{Kind: dataset.StepQuery, Columns: []string{"x"}, Rows: big},
	}}
	r.Bound(dataset.MaxResultBytes)
	for i, want := range []bool{true, false, false, false} {
		s := r.Steps[i]
		if cut := s.RowsCut == dataset.CutBytes && s.Truncated && len(s.Rows) == 0; cut != want {
			t.Errorf("step %d: rows %d, rows cut %q; want cut %v", i, len(s.Rows), s.RowsCut, want)
		}
	}
}

// BenchmarkQuery is an ordinary query (v_events, every column). Bounding
// bytes inside SQLite costs it about 1 ms: 0.97 → 1.9 ms/op and 218 →
// 249 KB/op on a shared 2-core machine (load 6–8), against a model's
// seconds per question.
func BenchmarkQuery(b *testing.B) {
	d, _ := mustOpen(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := d.Query(ctx, "SELECT * FROM v_events"); err != nil {
			b.Fatal(err)
		}
	}
}
