package chart

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/go-analyze/charts"
)

// Render draws the rows of one result set as spec asks, as an SVG document of
// DefaultWidth by DefaultHeight (a table is as tall as its rows). rows hold
// the values database/sql scanned into `any` from SQLite: int64, float64,
// string, []byte, nil or time.Time; y columns must hold numbers or numeric
// text, and NULL leaves a gap. A result with no rows renders an empty chart
// that says so. What does not fit (more than MaxPoints x values, MaxSeries
// groups or slices, MaxTableRows rows) is left out and the subtitle says what.
//
// Errors are the plain sentences of Spec.Validate and of non-numeric values,
// meant to be sent back to a model. The same input always gives the same
// bytes. Render is safe for concurrent use; the caller owns the result.
func Render(spec Spec, columns []string, rows [][]any) ([]byte, error) {
	if err := spec.Validate(columns); err != nil {
		return nil, err
	}
	if err := shape(columns, rows); err != nil {
		return nil, err
	}
	if spec.Type == Table {
		return renderTable(spec, columns, rows, DefaultWidth)
	}
	if len(rows) == 0 {
		return empty(spec.Title, "the query returned no rows", DefaultWidth, DefaultHeight)
	}
	if spec.Type == Pie {
		return renderPie(spec, columns, rows)
	}
	d, err := extract(spec, columns, rows)
	if err != nil {
		return nil, err
	}
	p := painter(DefaultWidth, DefaultHeight)
	switch spec.Type {
	case Bar:
		err = p.BarChart(barOption(spec, d))
	case Line, Area:
		err = p.LineChart(lineOption(spec, d))
	case Scatter:
		err = p.ScatterChart(scatterOption(spec, d))
	}
	if err != nil {
		return nil, fmt.Errorf("chart: draw %s: %w", spec.Type, err)
	}
	return p.Bytes()
}

// yName titles the value axis: the y column, or the one value column of a
// pivot, but nothing when several series share the axis (the legend names them).
func yName(spec Spec) string {
	if len(spec.Y) == 1 {
		return spec.Y[0]
	}
	return ""
}

func note(d dataset) string { return strings.Join(d.notes, "; ") }

// horizontal reports whether bars read better lying down: a few long
// names (tables, tools, models) that would not fit side by side under the
// bars. Dates, times and numbers stay along the bottom, where order reads
// left to right.
func horizontal(labels []string, width int) bool {
	if len(labels) > 15 || ordered(labels) {
		return false
	}
	return minStep(labels, width, true) > 1
}

// ordered reports whether every label starts with a digit, as dates, times
// and numbers do.
func ordered(labels []string) bool {
	for _, l := range labels {
		if l == "" || l[0] < '0' || l[0] > '9' {
			return false
		}
	}
	return true
}

func barOption(spec Spec, d dataset) charts.BarChartOption {
	lying := horizontal(d.x, DefaultWidth)
	if lying { // the library stacks categories bottom up; rows read top down
		d.x = reversed(d.x)
		for i := range d.values {
			d.values[i] = reversed(d.values[i])
		}
	}
	values := make([][]float64, len(d.values))
	for i, v := range d.values {
		values[i] = nulls(v)
	}
	opt := charts.NewBarChartOptionWithData(values)
	opt.Theme = theme()
	opt.Title = titleOption(spec.Title, note(d), DefaultWidth)
	opt.Legend = legend(d.names)
	opt.CategoryAxis = xAxis(spec.X, d.x, DefaultWidth, true)
	opt.ValueAxis = []charts.ValueAxisOption{yAxis(yName(spec))}
	if !negative(d.values) { // a bar is read by its length, so it starts at zero
		opt.ValueAxis[0].Min = charts.Ptr(0.0)
	}
	opt.ValueFormatter = formatValue
	countAxis(&opt.ValueAxis[0], d.values)
	across := DefaultWidth
	if lying {
		across = DefaultHeight
	}
	opt.BarSize = barSize(len(d.x), len(d.values), across)
	if lying { // the category axis stands up: no thinning along the width
		opt.Horizontal = true
		opt.CategoryAxis.Title = ""
		opt.CategoryAxis.Labels, opt.CategoryAxis.LabelCount = d.x, 0
		// Names are set flush against the axis by their measured width; a
		// wider fallback font would run them into it.
		opt.CategoryAxis.LabelOffset = charts.OffsetInt{Left: -6}
		opt.ValueAxis[0].LabelOffset = charts.OffsetInt{}
	}
	return opt
}

// maxBar is the widest a bar is drawn, in pixels: one or two rows would
// otherwise fill the chart with a slab that reads as a background.
const maxBar = 64

// barSize is the library's BarSize (a share of a category's slot, 0 for
// its default) that keeps each of series bars in one of slots categories
// across a chart's side of length across no thicker than maxBar.
func barSize(slots, series, across int) float64 {
	if slots == 0 || series == 0 {
		return 0
	}
	slot := float64(across-100) / float64(slots) // less the axes' labels
	if share := float64(maxBar*series) / slot; share < 0.8 {
		return share
	}
	return 0
}

// centred reports whether a line or scatter keeps a half slot of margin at
// each end with its labels centred under the points, as reads well for a
// few points; many points and areas run edge to edge.
func centred(spec Spec, x []string) bool {
	return spec.Type != Area && len(x) <= denseLabels
}

func reversed[T any](s []T) []T {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

func lineOption(spec Spec, d dataset) charts.LineChartOption {
	values := make([][]float64, len(d.values))
	for i, v := range d.values {
		values[i] = nulls(v)
	}
	opt := charts.NewLineChartOptionWithData(values)
	opt.Theme = theme()
	opt.Title = titleOption(spec.Title, note(d), DefaultWidth)
	opt.Legend = legend(d.names)
	opt.XAxis = xAxis(spec.X, d.x, DefaultWidth, centred(spec, d.x))
	opt.YAxis = []charts.YAxisOption{yAxis(yName(spec))}
	opt.ValueFormatter = formatValue
	countAxis(&opt.YAxis[0], d.values)
	if spec.Type == Area {
		opt.FillArea = charts.Ptr(true)
		opt.FillOpacity = 90
		// Areas stack, so the top line is the total: overlapping fills
		// would hide each other and mix into colours no legend names.
		opt.StackSeries = charts.Ptr(len(d.values) > 1)
		if !negative(d.values) { // an area is read by its size, so it stands on zero
			opt.YAxis[0].Min = charts.Ptr(0.0)
		}
	}
	return opt
}

// scatterOption places points over the distinct x values, sorted when they
// are all numbers: the library's scatter has a category x axis, so equal x
// values share one position and a numeric x at least reads left to right.
func scatterOption(spec Spec, d dataset) charts.ScatterChartOption {
	xs := index{}
	for _, x := range d.x {
		xs.add(x)
	}
	order := slices.Clone(xs.names)
	if numericLabels(order) {
		slices.SortStableFunc(order, func(a, b string) int {
			fa, _ := parse(a)
			fb, _ := parse(b)
			return cmp.Compare(fa, fb)
		})
	}
	at := map[string]int{}
	for i, x := range order {
		at[x] = i
	}
	values := make([][][]float64, len(d.values))
	for s, series := range d.values {
		values[s] = make([][]float64, len(order))
		for i, v := range series {
			if !math.IsNaN(v) {
				values[s][at[d.x[i]]] = append(values[s][at[d.x[i]]], v)
			}
		}
		for i := range values[s] {
			if len(values[s][i]) == 0 { // the library reads an empty sample as zero
				values[s][i] = []float64{charts.GetNullValue()}
			}
		}
	}
	opt := charts.NewScatterChartOptionWithSeries(charts.NewSeriesListScatterMultiValue(values))
	opt.Theme = theme()
	opt.Title = titleOption(spec.Title, note(d), DefaultWidth)
	opt.Legend = legend(d.names)
	opt.XAxis = xAxis(spec.X, order, DefaultWidth, centred(spec, order))
	opt.YAxis = []charts.YAxisOption{yAxis(yName(spec))}
	opt.ValueFormatter = formatValue
	opt.Symbol = charts.Symbol{Shape: charts.SymbolCircle, Size: 3}
	return opt
}

func negative(values [][]float64) bool {
	for _, series := range values {
		for _, v := range series {
			if v < 0 {
				return true
			}
		}
	}
	return false
}

func numericLabels(labels []string) bool {
	for _, l := range labels {
		if _, err := parse(l); err != nil {
			return false
		}
	}
	return true
}

// renderPie draws one slice per row; slices past MaxSeries are summed into
// "other", which a pie (unlike a line) can do without lying.
func renderPie(spec Spec, columns []string, rows [][]any) ([]byte, error) {
	xi, yi := slices.Index(columns, spec.X), slices.Index(columns, spec.Y[0])
	type slice struct {
		name  string
		value float64
	}
	var parts []slice
	for i, row := range rows {
		v, err := number(row[yi])
		if err != nil {
			return nil, notNumeric(spec.Y[0], i, row[yi])
		}
		if v < 0 {
			return nil, fmt.Errorf("column %q has a negative value (%s in row %d); a pie needs sizes of zero or more, use a bar chart instead", spec.Y[0], label(row[yi]), i+1)
		}
		if v > 0 { // NaN and zero take no room
			parts = append(parts, slice{label(row[xi]), v})
		}
	}
	var notes []string
	if len(parts) > MaxSeries {
		slices.SortStableFunc(parts, func(a, b slice) int { return cmp.Compare(b.value, a.value) })
		other := slice{name: "other"}
		for _, s := range parts[MaxSeries-1:] {
			other.value += s.value
		}
		notes = append(notes, fmt.Sprintf("the %d largest of %d slices, the rest as other", MaxSeries-1, len(parts)))
		parts = append(parts[:MaxSeries-1], other)
	}
	if len(parts) == 0 {
		return empty(spec.Title, "every value is zero or empty", DefaultWidth, DefaultHeight)
	}
	values, names := make([]float64, len(parts)), make([]string, len(parts))
	for i, s := range parts {
		values[i], names[i] = s.value, s.name
	}
	opt := charts.NewPieChartOptionWithData(values)
	opt.Theme = theme()
	opt.Title = titleOption(spec.Title, strings.Join(notes, "; "), DefaultWidth)
	opt.Legend = legend(names)
	opt.Legend.Show = charts.Ptr(false) // every slice is labelled where it is
	for i := range opt.SeriesList {
		opt.SeriesList[i].Label.FontStyle = font(labelSize)
	}
	p := painter(DefaultWidth, DefaultHeight)
	if err := p.PieChart(opt); err != nil {
		return nil, fmt.Errorf("chart: draw pie: %w", err)
	}
	return p.Bytes()
}

// empty draws a chart with no axes, titled with why it is empty, around
// the library's empty-set mark.
func empty(text, why string, width, height int) ([]byte, error) {
	if text != "" {
		why = text + " — " + why
	}
	opt := charts.NewLineChartOptionWithData(nil)
	opt.Theme = theme()
	opt.Title = titleOption(why, "", width)
	opt.Legend.Show = charts.Ptr(false)
	opt.XAxis.Show = charts.Ptr(false)
	opt.YAxis = []charts.YAxisOption{{Show: charts.Ptr(false)}}
	p := painter(width, height)
	if err := p.LineChart(opt); err != nil {
		return nil, fmt.Errorf("chart: draw empty chart: %w", err)
	}
	return p.Bytes()
}
