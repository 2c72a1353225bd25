package chart

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// dataset is a result set mapped onto a chart: labels along x and one row
// of values per series, NaN where a series has no value.
type dataset struct {
	x      []string
	names  []string
	values [][]float64 // [series][x]
	notes  []string    // what was left out, for the subtitle
}

// extract maps rows onto spec's x and y columns, pivoting on spec.Group when
// it is set. spec must have been validated against columns, and every row
// must have one value per column.
func extract(spec Spec, columns []string, rows [][]any) (dataset, error) {
	if spec.Group != "" {
		return pivot(spec, columns, rows)
	}
	var d dataset
	if len(rows) > MaxPoints {
		d.notes = append(d.notes, fmt.Sprintf("first %d of %d rows", MaxPoints, len(rows)))
		rows = rows[:MaxPoints]
	}
	xi := slices.Index(columns, spec.X)
	d.names = spec.Y
	d.values = make([][]float64, len(spec.Y))
	for i, row := range rows {
		d.x = append(d.x, label(row[xi]))
		for s, y := range spec.Y {
			cell := row[slices.Index(columns, y)]
			v, err := number(cell)
			if err != nil {
				return dataset{}, notNumeric(y, i, cell)
			}
			d.values[s] = append(d.values[s], v)
		}
	}
	return d, nil
}

// pivot turns long rows (x, group, y) into one series per group value, with
// x and groups in the order they first appear. Two rows for the same x and
// group are refused rather than summed: the query should have aggregated
// them, and a silent sum of averages would draw a wrong chart.
func pivot(spec Spec, columns []string, rows [][]any) (dataset, error) {
	xi, gi, yi := slices.Index(columns, spec.X), slices.Index(columns, spec.Group), slices.Index(columns, spec.Y[0])
	xs, groups := index{}, index{}
	type cell struct{ x, g int }
	cells := map[cell]float64{}
	for i, row := range rows {
		v, err := number(row[yi])
		if err != nil {
			return dataset{}, notNumeric(spec.Y[0], i, row[yi])
		}
		c := cell{xs.add(label(row[xi])), groups.add(label(row[gi]))}
		if _, dup := cells[c]; dup {
			return dataset{}, fmt.Errorf("two rows have %s = %s and %s = %s; aggregate them in the query (GROUP BY %s, %s) so each pair has one row",
				spec.X, xs.names[c.x], spec.Group, groups.names[c.g], spec.X, spec.Group)
		}
		cells[c] = v
	}
	d := dataset{x: xs.names, names: groups.names, values: make([][]float64, len(groups.names))}
	for g := range d.values {
		d.values[g] = make([]float64, len(xs.names))
		for x := range d.values[g] {
			v, ok := cells[cell{x, g}]
			if !ok {
				v = math.NaN()
			}
			d.values[g][x] = v
		}
	}
	d.keepLargestSeries(spec.Group)
	d.keepFirstPoints()
	return d, nil
}

// keepLargestSeries drops all but the MaxSeries series with the largest
// totals, keeping their order, and says so in a note.
func (d *dataset) keepLargestSeries(group string) {
	if len(d.names) <= MaxSeries {
		return
	}
	order := make([]int, len(d.names))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(total(d.values[b]), total(d.values[a])) })
	keep := order[:MaxSeries]
	slices.Sort(keep)
	var names []string
	var values [][]float64
	for _, i := range keep {
		names, values = append(names, d.names[i]), append(values, d.values[i])
	}
	d.notes = append(d.notes, fmt.Sprintf("the %d largest of %d %s values", MaxSeries, len(d.names), group))
	d.names, d.values = names, values
}

// keepFirstPoints cuts every series to the first MaxPoints x positions.
func (d *dataset) keepFirstPoints() {
	if len(d.x) <= MaxPoints {
		return
	}
	d.notes = append(d.notes, fmt.Sprintf("first %d of %d x values", MaxPoints, len(d.x)))
	d.x = d.x[:MaxPoints]
	for i := range d.values {
		d.values[i] = d.values[i][:MaxPoints]
	}
}

func total(values []float64) float64 {
	var t float64
	for _, v := range values {
		if !math.IsNaN(v) {
			t += math.Abs(v)
		}
	}
	return t
}

// index numbers distinct labels in the order they first appear.
type index struct {
	names []string
	at    map[string]int
}

func (ix *index) add(name string) int {
	if i, ok := ix.at[name]; ok {
		return i
	}
	if ix.at == nil {
		ix.at = map[string]int{}
	}
	ix.at[name] = len(ix.names)
	ix.names = append(ix.names, name)
	return len(ix.names) - 1
}

// shape checks that every row has one value per column; a mismatch is a
// bug in the caller, not something a model can fix.
func shape(columns []string, rows [][]any) error {
	for i, row := range rows {
		if len(row) != len(columns) {
			return fmt.Errorf("chart: row %d has %d values for %d columns", i+1, len(row), len(columns))
		}
	}
	return nil
}
