package chart

import (
	"math"
	"strings"

	"github.com/go-analyze/charts"
)

// Default size of a chart, in SVG user units (CSS pixels).
const (
	DefaultWidth  = 720
	DefaultHeight = 320
)

// Font sizes in points; the library draws them at 96 DPI (12pt is 16px).
// They are a little smaller than the library's defaults because the SVG names
// Roboto and a browser without it falls back to a wider sans-serif: the
// slack keeps neighbouring labels from running into each other.
const (
	titleSize  = 12
	noteSize   = 9
	labelSize  = 9
	legendSize = 9
)

// theme is the palette of every chart: the library's light theme, on white,
// which sits on a plain HTML page without a frame.
func theme() charts.ColorPalette { return charts.GetTheme(charts.ThemeLight) }

func font(size float64) charts.FontStyle {
	return charts.FontStyle{FontSize: size, FontColor: theme().GetTitleTextColor()}
}

// titleOption is the title option shared by every chart: centred, because
// the library centres the lines of a title on each other, wrapped onto a
// second line when it is wider than the chart, with note in small type
// under it (what was left out).
func titleOption(text, note string, width int) charts.TitleOption {
	return charts.TitleOption{
		Text:             wrap(clip(text, maxTitle), width-60),
		Subtext:          note,
		Offset:           charts.OffsetCenter,
		FontStyle:        font(titleSize),
		SubtextFontStyle: font(noteSize),
	}
}

// wrap breaks text at spaces into lines no wider than width, as measured in
// the title font with some slack for a wider fallback font.
func wrap(text string, width int) string {
	m := painter(DefaultWidth, DefaultHeight)
	fits := func(s string) bool { return m.MeasureText(s, 0, font(titleSize)).Width()*slack/100 <= width }
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && !fits(line+" "+word) {
			lines = append(lines, line)
			line = ""
		}
		line = strings.TrimSpace(line + " " + word)
	}
	return strings.Join(append(lines, line), "\n")
}

// slack is how much wider, in percent, text may come out than the library
// measures it: the SVG names Roboto, and a browser without it falls back to a
// wider sans-serif.
const slack = 125

// legend names the series, and only when there is more than one: a single
// series is named by the title and the y axis. It sits under the chart,
// where it can wrap onto several rows without meeting the title.
func legend(names []string) charts.LegendOption {
	return charts.LegendOption{
		Show:        charts.Ptr(len(names) > 1),
		SeriesNames: names,
		FontStyle:   font(legendSize),
		Offset:      charts.OffsetStr{Left: charts.PositionCenter, Top: charts.PositionBottom},
	}
}

func xAxis(name string, labels []string, width int) charts.XAxisOption {
	return charts.XAxisOption{
		Title:          name,
		TitleFontStyle: font(labelSize),
		Labels:         labels,
		LabelFontStyle: font(labelSize),
		LabelCount:     labelCount(labels, width),
	}
}

// labelCount chooses how many x labels to print, or 0 to print them all.
// The library prints the last label flush right and the others from their
// tick, so two neighbours need two label widths between ticks, more than its
// own estimate leaves; and it measures Roboto, which a browser may not have.
func labelCount(labels []string, width int) int {
	if all, fit := labelFit(labels, width); !all {
		return fit
	}
	return 0
}

// labelFit reports whether every label fits side by side along the x axis
// of a chart width wide, and if not how many can be printed at most.
func labelFit(labels []string, width int) (all bool, fit int) {
	m := painter(DefaultWidth, DefaultHeight)
	widest := 0
	for _, l := range labels {
		widest = max(widest, m.MeasureText(l, 0, font(labelSize)).Width()*slack/100)
	}
	plot := width - 80 // the y axis and padding
	return len(labels)*(widest+12) <= plot, max(plot/(2*widest+12)+1, 2)
}

func yAxis(name string) charts.YAxisOption {
	return charts.YAxisOption{
		Title:          name,
		TitleFontStyle: font(labelSize),
		LabelFontStyle: font(labelSize),
		ValueFormatter: formatValue,
		// The library aims at ten labels; five or six read better at our height.
		LabelCountAdjustment: -4,
	}
}

// formatValue keeps small values (costs in dollars) readable, where the
// library's default of two decimals would print every tick as 0.01.
func formatValue(v float64) string {
	if v != 0 && math.Abs(v) < 1 {
		return charts.FormatValueHumanize(v, 4, false)
	}
	return charts.FormatValueHumanizeShort(v, 2, false)
}

// nulls swaps NaN gaps for the library's null value, which it leaves undrawn.
func nulls(values []float64) []float64 {
	out := make([]float64, len(values))
	for i, v := range values {
		if math.IsNaN(v) {
			v = charts.GetNullValue()
		}
		out[i] = v
	}
	return out
}

func painter(width, height int) *charts.Painter {
	return charts.NewPainter(charts.PainterOptions{
		OutputFormat: charts.ChartOutputSVG,
		Width:        width,
		Height:       height,
		Theme:        theme(),
	})
}

// size fills in the default size for zero or negative dimensions.
func size(width, height int) (int, int) {
	if width <= 0 {
		width = DefaultWidth
	}
	if height <= 0 {
		height = DefaultHeight
	}
	return width, height
}
