package dataset

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// TextCellBytes cuts each cell in [Result.Text]: a model reads a value,
// not a document, and 4 KiB of 20 rows of a few columns stays within the
// text's own bound.
const TextCellBytes = 4 << 10

// Text renders the result for a model (seed 003's query summary): its
// size, columns and the first maxRows rows as a pipe-separated table, in
// at most about maxBytes bytes (0: no bound). A cell longer than
// TextCellBytes, or cut in the result, ends with its marker
// ("…[cut: 16,777,216 bytes, showing 4,096]"); rows that would pass
// maxBytes are left out with a line that says so.
func (r *Result) Text(maxRows, maxBytes int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d rows x %d columns", len(r.Rows), len(r.Columns))
	switch r.RowsCut {
	case CutRows:
		fmt.Fprintf(&b, " (cut at the %d-row cap; aggregate or add LIMIT)", r.MaxRows)
	case CutBytes:
		fmt.Fprintf(&b, " (cut at %s bytes; select fewer or shorter columns, or aggregate)", thousands(MaxResultBytes))
	}
	fmt.Fprintf(&b, "\n%s\n", strings.Join(r.Columns, " | "))
	cut := make(map[[2]int]CellCut, len(r.Cut))
	for _, c := range r.Cut {
		cut[[2]int{c.Row, c.Column}] = c
	}
	for i, row := range r.Rows {
		if i == maxRows {
			fmt.Fprintf(&b, "… %d more rows\n", len(r.Rows)-maxRows)
			break
		}
		cells := make([]string, len(row))
		for j, v := range row {
			cells[j] = textCell(v, cut[[2]int{i, j}])
		}
		line := strings.Join(cells, " | ") + "\n"
		if maxBytes > 0 && b.Len()+len(line) > maxBytes {
			fmt.Fprintf(&b, "… %d more rows left out: this text is cut at %s bytes\n", len(r.Rows)-i, thousands(maxBytes))
			break
		}
		b.WriteString(line)
	}
	return b.String()
}

// textCell renders v, cut at TextCellBytes; c is its cut in the result,
// if any, whose size the marker reports.
func textCell(v any, c CellCut) string {
	s := cell(v)
	size := len(s)
	if c.Bytes > 0 {
		size = c.Bytes
	}
	if len(s) > TextCellBytes {
		n := TextCellBytes
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	if len(s) < size {
		s += cutMarker(size, len(s))
	}
	return s
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
