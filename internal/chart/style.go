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

// xAxis labels the category axis. centred says whether labels sit under
// the middle of their slot (bars, and lines with a boundary gap) or hang
// from their tick (lines running edge to edge).
func xAxis(name string, labels []string, width int, centred bool) charts.XAxisOption {
	opt := charts.XAxisOption{
		Title:          name,
		TitleFontStyle: font(labelSize),
		Labels:         labels,
		LabelFontStyle: font(labelSize),
		BoundaryGap:    charts.Ptr(centred),
	}
	opt.Labels, opt.LabelCount = thin(labels, width, centred)
	return opt
}

// denseLabels is the number of x positions past which thinning is left to
// the library: below it every position gets a tick, and the labels that
// are not printed are blanked.
const denseLabels = 40

// thin decides which x labels are printed. The library prints the last
// label flush right and, left to itself, may print the one before it a
// single position away, over it; it also measures Roboto, which a browser
// may not have. So labels are kept every k-th position, k the smallest step
// that leaves room for a label, and the rest blanked: counting back from the
// last for labels hung from their tick (the last is set flush right),
// counting on from the first for centred ones, dropping any whose centre is
// too near the right edge to hold half a label. Past denseLabels positions
// the rounding that causes the overlap is small, and the library is given a
// count instead.
func thin(labels []string, width int, centred bool) ([]string, int) {
	n := len(labels)
	if n == 0 {
		return labels, 0
	}
	step := minStep(labels, width, centred)
	if n > denseLabels {
		return labels, max((n+step-1)/step, 2)
	}
	plot, half := width-80, widest(labels)/2
	out := make([]string, n)
	for i := range labels {
		switch {
		case !centred && (n-1-i)%step == 0:
			out[i] = labels[i]
		case centred && i%step == 0 && (2*i+1)*plot/(2*n)+half <= plot+15: // 15 of the 20 of padding
			out[i] = labels[i]
		}
	}
	return out, n
}

// minStep is the fewest x positions from one printed label to the next
// that leaves room between them: one label width for centred labels, two
// for labels hung from their tick, since the last one is set flush right.
func minStep(labels []string, width int, centred bool) int {
	n := len(labels)
	w := widest(labels)
	need := 2*w + 12
	if centred {
		need = w + 12
	}
	plot := width - 80 // the y axis and padding
	step := 1
	for step < n && step*plot < need*n {
		step++
	}
	return step
}

// widest is the width of the widest label, with slack for a wider font.
func widest(labels []string) int {
	m := painter(DefaultWidth, DefaultHeight)
	w := 0
	for _, l := range labels {
		w = max(w, m.MeasureText(l, 0, font(labelSize)).Width()*slack/100)
	}
	return w
}

func yAxis(name string) charts.YAxisOption {
	opt := charts.YAxisOption{
		Title:          name,
		TitleFontStyle: font(labelSize),
		LabelFontStyle: font(labelSize),
		ValueFormatter: formatValue,
		// The library aims at ten labels; fewer read better at our height.
		LabelCountAdjustment: -3,
	}
	if name != "" {
		// The library sets the axis title's baseline where the labels
		// begin, so descenders (the _ of cost_usd) touch them.
		opt.LabelOffset = charts.OffsetInt{Left: 4}
	}
	return opt
}

// formatValue keeps small values (costs in dollars) readable, where the
// library's default of two decimals would print every tick as 0.01.
func formatValue(v float64) string {
	if v != 0 && math.Abs(v) < 1 {
		return trimZeros(charts.FormatValueHumanize(v, 4, false))
	}
	return trimZeros(charts.FormatValueHumanizeShort(v, 2, false))
}

// trimZeros drops the zeros that pad a label's fraction, and the point if
// nothing is left of it ("350.00" is 350, "1.50k" 1.5k): go-humanize pads
// them since v1.1.0, which modernc.org/libc requires.
func trimZeros(s string) string {
	num := strings.TrimRight(s, "kMGT")
	suffix := s[len(num):]
	if strings.Contains(num, ".") {
		num = strings.TrimSuffix(strings.TrimRight(num, "0"), ".")
	}
	return num + suffix
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
