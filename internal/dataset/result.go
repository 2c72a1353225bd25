package dataset

import (
	"fmt"
	"strings"
)

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
