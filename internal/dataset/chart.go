package dataset

import (
	"fmt"
	"slices"
	"strings"
)

// Spec is a declarative chart over a Result's columns (issue 10's
// visualize): never code. It has the JSON shape of internal/chart's Spec
// (type, x, y, group, title) so the two convert field by field.
type Spec struct {
	// Type is bar, line, area, pie, scatter or table.
	Type string `json:"type"`
	// X is the column along the x axis (the slice names for a pie).
	X string `json:"x"`
	// Y are the numeric columns plotted, one series each (a pie takes one).
	Y []string `json:"y"`
	// Group, when set, is a column whose values split Y into series.
	Group string `json:"group"`
	Title string `json:"title"`
}

// ChartTypes are the values Spec.Type may take.
var ChartTypes = []string{"bar", "line", "area", "pie", "scatter", "table"}

// Check reports whether s can be drawn from r: a known type, columns that
// exist, numeric Y columns. The error is an EINVALID sentence a model can
// act on.
func (s Spec) Check(r *Result) error {
	if r == nil {
		return invalidf("There is no result to chart yet: run query_data first.")
	}
	if !slices.Contains(ChartTypes, s.Type) {
		return invalidf("Chart type %q is unknown; use one of %s.", s.Type, strings.Join(ChartTypes, ", "))
	}
	if s.Type == "table" {
		return nil
	}
	cols := strings.Join(r.Columns, ", ")
	if r.Index(s.X) < 0 {
		return invalidf("x column %q is not in the last result; its columns are %s.", s.X, cols)
	}
	if len(s.Y) == 0 {
		return invalidf("Give at least one y column; the last result's columns are %s.", cols)
	}
	if s.Type == "pie" && (len(s.Y) != 1 || s.Group != "") {
		return invalidf("A pie takes exactly one y column and no group.")
	}
	for _, y := range s.Y {
		if r.Index(y) < 0 {
			return invalidf("y column %q is not in the last result; its columns are %s.", y, cols)
		}
		if !r.Numeric(y) {
			return invalidf("y column %q is not numeric; pick a numeric column or aggregate in SQL.", y)
		}
	}
	if s.Group != "" && r.Index(s.Group) < 0 {
		return invalidf("group column %q is not in the last result; its columns are %s.", s.Group, cols)
	}
	return nil
}

// Index returns the position of the column named name, or -1.
func (r *Result) Index(name string) int { return slices.Index(r.Columns, name) }

// Numeric reports whether every non-NULL value of the named column is a
// number (and there is at least one row).
func (r *Result) Numeric(name string) bool {
	i := r.Index(name)
	if i < 0 || len(r.Rows) == 0 {
		return false
	}
	for _, row := range r.Rows {
		switch row[i].(type) {
		case int64, float64, nil:
		default:
			return false
		}
	}
	return true
}

// Text renders the result for a model (seed 003's query summary): its
// size, columns and the first max rows as a pipe-separated table.
func (r *Result) Text(max int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d rows x %d columns", len(r.Rows), len(r.Columns))
	if r.Truncated {
		fmt.Fprintf(&b, " (cut at the %d-row cap; aggregate or add LIMIT)", r.MaxRows)
	}
	fmt.Fprintf(&b, "\n%s\n", strings.Join(r.Columns, " | "))
	for i, row := range r.Rows {
		if i == max {
			fmt.Fprintf(&b, "… %d more rows\n", len(r.Rows)-max)
			break
		}
		cells := make([]string, len(row))
		for j, v := range row {
			cells[j] = cell(v)
		}
		fmt.Fprintf(&b, "%s\n", strings.Join(cells, " | "))
	}
	return b.String()
}

func cell(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case float64:
		return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.4f", v), "0"), ".")
	default:
		return fmt.Sprint(v)
	}
}
