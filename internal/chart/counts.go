package chart

import (
	"math"

	"github.com/go-analyze/charts"
)

// maxCountTicks is the largest count whose axis gets a label per whole
// number; above it the library's nice intervals are whole numbers anyway.
const maxCountTicks = 10

// counts reports whether every value is a whole number of at least zero
// (a count), and the largest.
func counts(values [][]float64) (float64, bool) {
	top := 0.0
	for _, series := range values {
		for _, v := range series {
			if math.IsNaN(v) {
				continue
			}
			if v < 0 || v != math.Trunc(v) {
				return 0, false
			}
			top = max(top, v)
		}
	}
	return top, true
}

// countAxis gives a value axis of small counts one label per whole
// number from zero, so no axis of fights or turns reads 0.5 or 1.6.
func countAxis(axis *charts.ValueAxisOption, values [][]float64) {
	top, ok := counts(values)
	if !ok || top > maxCountTicks {
		return
	}
	top = math.Max(top, 1)
	axis.Min, axis.Max, axis.LabelCount = charts.Ptr(0.0), charts.Ptr(top), int(top)+1
	axis.LabelCountAdjustment = 0 // the count is exact: one label per whole number
}
