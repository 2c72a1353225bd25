package chart

import (
	"fmt"
	"slices"
	"strings"
)

// Chart types a Spec may name.
const (
	Bar     = "bar"
	Line    = "line"
	Area    = "area"
	Pie     = "pie"
	Scatter = "scatter"
	Table   = "table"
)

// Types lists the chart types in the order they are offered to a model.
var Types = []string{Bar, Line, Area, Pie, Scatter, Table}

// Limits on what one chart shows; past them a chart is unreadable anyway.
const (
	MaxSeries    = 12  // lines, bar groups or pie slices
	MaxPoints    = 500 // x positions
	MaxTableRows = 20  // rows drawn by a table
	maxTitle     = 100 // characters of a title before it is cut
)

// Spec is a declarative chart over one result set: which columns go where.
// It is data, never code, so a model can write one and Validate can check it.
type Spec struct {
	// Type is one of Types.
	Type string `json:"type"`
	// X names the column of categories or times along the horizontal axis
	// (the slice labels of a pie). For a table it is an optional first column.
	X string `json:"x,omitempty"`
	// Y names the numeric columns drawn as series (one for a pie, or when
	// Group is set). For a table it lists the columns shown; empty shows all.
	Y []string `json:"y,omitempty"`
	// Group optionally names a column whose values become one series each:
	// rows are pivoted so every distinct group value gets its own line or bar.
	Group string `json:"group,omitempty"`
	// Title is drawn above the chart.
	Title string `json:"title,omitempty"`
}

// Validate checks the spec against the columns of the result it will draw.
// Its errors are plain sentences meant to be sent back to a model as they are,
// naming the columns it could have used.
func (s Spec) Validate(columns []string) error {
	if !slices.Contains(Types, s.Type) {
		if s.Type == "" {
			return fmt.Errorf("the chart has no type; use one of: %s", strings.Join(Types, ", "))
		}
		return fmt.Errorf("chart type %q is not supported; use one of: %s", s.Type, strings.Join(Types, ", "))
	}
	if len(columns) == 0 {
		return fmt.Errorf("the result has no columns to chart; run a query that returns rows first")
	}
	if s.Type == Table {
		return s.validateTable(columns)
	}
	if s.X == "" {
		return fmt.Errorf("a %s chart needs x: the column for the horizontal axis; columns: %s", s.Type, list(columns))
	}
	if err := column(s.X, columns); err != nil {
		return err
	}
	if len(s.Y) == 0 {
		return fmt.Errorf("a %s chart needs y: at least one numeric column to draw; columns: %s", s.Type, list(columns))
	}
	if err := s.validateY(columns); err != nil {
		return err
	}
	if s.Type == Pie && len(s.Y) != 1 {
		return fmt.Errorf("a pie chart takes exactly one y column (the slice sizes), not %d", len(s.Y))
	}
	if s.Group == "" {
		return nil
	}
	return s.validateGroup(columns)
}

func (s Spec) validateY(columns []string) error {
	if len(s.Y) > MaxSeries {
		return fmt.Errorf("a chart shows at most %d y columns, not %d; pick the ones that matter", MaxSeries, len(s.Y))
	}
	for i, y := range s.Y {
		if err := column(y, columns); err != nil {
			return err
		}
		if y == s.X {
			return fmt.Errorf("column %q is already x; y must name other, numeric columns", y)
		}
		if slices.Contains(s.Y[:i], y) {
			return fmt.Errorf("column %q appears twice in y", y)
		}
	}
	return nil
}

func (s Spec) validateGroup(columns []string) error {
	if s.Type == Pie {
		return fmt.Errorf("a pie chart cannot be grouped; drop group, or use a bar chart with group %q", s.Group)
	}
	if err := column(s.Group, columns); err != nil {
		return err
	}
	if s.Group == s.X || slices.Contains(s.Y, s.Group) {
		return fmt.Errorf("group %q must be a column other than x and y", s.Group)
	}
	if len(s.Y) != 1 {
		return fmt.Errorf("with group, y takes exactly one column (the values); each %s value becomes its own series", s.Group)
	}
	return nil
}

func (s Spec) validateTable(columns []string) error {
	if s.Group != "" {
		return fmt.Errorf("a table cannot be grouped; drop group, or use a bar or line chart")
	}
	shown := s.tableColumns(columns)
	for i, c := range shown {
		if err := column(c, columns); err != nil {
			return err
		}
		if slices.Contains(shown[:i], c) {
			return fmt.Errorf("column %q appears twice in the table", c)
		}
	}
	return nil
}

// tableColumns is the columns a table shows, in order: x first, then y, or
// every column when neither is given.
func (s Spec) tableColumns(columns []string) []string {
	if s.X == "" && len(s.Y) == 0 {
		return columns
	}
	var shown []string
	if s.X != "" {
		shown = append(shown, s.X)
	}
	return append(shown, s.Y...)
}

// column reports whether name is one of columns, in words a model can act on.
func column(name string, columns []string) error {
	if slices.Contains(columns, name) {
		return nil
	}
	for _, c := range columns {
		if strings.EqualFold(c, name) {
			return fmt.Errorf("column %q is not in the result; did you mean %q? columns: %s", name, c, list(columns))
		}
	}
	return fmt.Errorf("column %q is not in the result; columns: %s", name, list(columns))
}

func list(columns []string) string { return strings.Join(columns, ", ") }
