package chart

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/go-analyze/charts"
)

// Series is one named line of a TimeSeries: one value per time, NaN for a gap.
type Series struct {
	Name   string
	Values []float64
}

// TimeSeries draws series over times as a line chart for the dashboard, as
// SVG of width by height (zero takes DefaultWidth, DefaultHeight). Times are
// labelled HH:MM in their own location, with the date in front when the
// window is longer than a day. Labels fall on round times (every 5, 10, 15
// minutes, an hour…) when times are evenly spaced and their count minus one
// divides by such a step: give 61 points for an hour by the minute, 97 for
// a day by the quarter hour. With no times, or no values at all, it draws an
// empty chart titled "… no data yet" rather than failing. A series whose
// length differs from times is an error. Same input, same bytes; safe for
// concurrent use.
func TimeSeries(title string, times []time.Time, series []Series, width, height int) ([]byte, error) {
	width, height = size(width, height)
	for _, s := range series {
		if len(s.Values) != len(times) {
			return nil, fmt.Errorf("chart: series %q has %d values for %d times", s.Name, len(s.Values), len(times))
		}
	}
	if len(times) == 0 || len(series) == 0 || !anyValue(series) {
		return empty(title, "no data yet", width, height)
	}
	if len(times) > MaxPoints*3 || len(series) > MaxSeries {
		return nil, fmt.Errorf("chart: %d series of %d points is more than a dashboard chart shows", len(series), len(times))
	}
	names := make([]string, len(series))
	values := make([][]float64, len(series))
	for i, s := range series {
		names[i], values[i] = s.Name, nulls(s.Values)
	}
	opt := charts.NewLineChartOptionWithData(values)
	opt.Theme = theme()
	opt.Title = titleOption(title, "", width)
	opt.Legend = legend(names)
	labels := clock(times)
	opt.XAxis = xAxis("", labels, width, false)
	if n := roundLabels(times, labels, width); n > 0 {
		opt.XAxis.Labels, opt.XAxis.LabelCount = labels, n
	}
	opt.YAxis = []charts.YAxisOption{yAxis("")}
	if !negative(values) { // counts and rates: a line over a cut-off axis reads as a spike
		opt.YAxis[0].Min = charts.Ptr(0.0)
	}
	opt.ValueFormatter = formatValue
	raw := make([][]float64, len(series))
	for i, s := range series {
		raw[i] = s.Values
	}
	countAxis(&opt.YAxis[0], raw)
	opt.Symbol = charts.Symbol{Shape: charts.SymbolNone}
	opt.LineStrokeWidth = 1.5
	p := painter(width, height)
	if err := p.LineChart(opt); err != nil {
		return nil, fmt.Errorf("chart: draw time series: %w", err)
	}
	return p.Bytes()
}

// Sparkline draws values as a bare line of width by height: no title, axes
// or legend, for a number's trend in a table cell. NaN is a gap; no values
// give an empty (blank) image.
func Sparkline(values []float64, width, height int) ([]byte, error) {
	if width <= 0 || height <= 0 {
		width, height = 120, 28
	}
	opt := charts.NewLineChartOptionWithData([][]float64{nulls(values)})
	if len(values) == 0 || !anyValue([]Series{{Values: values}}) {
		opt = charts.NewLineChartOptionWithData([][]float64{{}})
	}
	opt.Theme = theme()
	opt.Padding = charts.NewBoxEqual(2)
	opt.Legend.Show = charts.Ptr(false)
	opt.XAxis.Show = charts.Ptr(false)
	opt.XAxis.BoundaryGap = charts.Ptr(false)
	opt.YAxis = []charts.YAxisOption{{Show: charts.Ptr(false)}}
	opt.Symbol = charts.Symbol{Shape: charts.SymbolNone}
	opt.LineStrokeWidth = 1.5
	p := painter(width, height)
	if err := p.LineChart(opt); err != nil {
		return nil, fmt.Errorf("chart: draw sparkline: %w", err)
	}
	return p.Bytes()
}

func anyValue(series []Series) bool {
	for _, s := range series {
		for _, v := range s.Values {
			if !math.IsNaN(v) {
				return true
			}
		}
	}
	return false
}

// clock labels times as HH:MM, prefixed with the date past a day's window.
func clock(times []time.Time) []string {
	layout := "15:04"
	if times[len(times)-1].Sub(times[0]) > 24*time.Hour {
		layout = "Jan 2 15:04"
	}
	out := make([]string, len(times))
	for i, t := range times {
		out[i] = t.Format(layout)
	}
	return out
}

// roundSteps are the label intervals a reader finds natural.
var roundSteps = []time.Duration{
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 4 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// roundLabels picks how many x labels to show so that they land on round
// times. The library spaces labels evenly by index from the first point to
// the last, so a count whose step divides the points evenly, at a round
// interval from a round start, puts every label on the clock's marks. It
// returns 0, leaving the labels to thin, when no such count fits the width.
func roundLabels(times []time.Time, labels []string, width int) int {
	n := len(times)
	for step := minStep(labels, width, false); step < n; step++ {
		if (n-1)%step != 0 {
			continue
		}
		d := times[step].Sub(times[0])
		if slices.Contains(roundSteps, d) && times[0].Truncate(d).Equal(times[0]) && evenly(times, step, d) {
			return (n-1)/step + 1
		}
	}
	return 0
}

// evenly reports whether every step-th time is d after the one before.
func evenly(times []time.Time, step int, d time.Duration) bool {
	for i := step; i < len(times); i += step {
		if times[i].Sub(times[i-step]) != d {
			return false
		}
	}
	return true
}
