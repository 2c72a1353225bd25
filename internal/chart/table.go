package chart

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/go-analyze/charts"
)

// tableMargin is the space around the title and below the table.
const tableMargin = 12

// renderTable draws up to MaxTableRows rows of the spec's columns with the
// library's table renderer, under the title. The library's tables have no
// title of their own, so the title is set as text above the table's box.
func renderTable(spec Spec, columns []string, rows [][]any, width int) ([]byte, error) {
	shown := spec.tableColumns(columns)
	at := make([]int, len(shown))
	for i, c := range shown {
		at[i] = slices.Index(columns, c)
	}
	var why string
	switch {
	case len(rows) == 0:
		why = "the query returned no rows"
	case len(rows) > MaxTableRows:
		why = fmt.Sprintf("first %d of %d rows", MaxTableRows, len(rows))
		rows = rows[:MaxTableRows]
	}
	data := make([][]string, len(rows))
	for r, row := range rows {
		data[r] = make([]string, len(shown))
		for c, i := range at {
			data[r][c] = label(row[i])
		}
	}
	opt := charts.TableChartOption{
		OutputFormat: charts.ChartOutputSVG,
		Theme:        theme(),
		Width:        width - 2*tableMargin,
		Header:       shown,
		Data:         data,
		Spans:        spans(shown, data),
		TextAligns:   aligns(shown, at, rows),
		FontStyle:    font(labelSize),
		Padding:      charts.Box{Top: 6, Bottom: 6, Left: 8, Right: 8, IsSet: true},
	}
	// The table's height depends on how its cells wrap; the library only
	// reports it by drawing the table once on its own.
	measured, err := charts.TableOptionRenderDirect(opt)
	if err != nil {
		return nil, fmt.Errorf("chart: measure table: %w", err)
	}
	head := heading(spec.Title, why, width)
	p := painter(width, head.height+measured.Height()+tableMargin)
	p.FilledRect(0, 0, width, p.Height(), theme().GetBackgroundColor(), charts.ColorTransparent, 0)
	head.draw(p)
	body := p.Child(charts.PainterBoxOption(charts.NewBox(tableMargin, head.height, width-tableMargin, p.Height()-tableMargin)))
	if err := body.TableChart(opt); err != nil {
		return nil, fmt.Errorf("chart: draw table: %w", err)
	}
	return p.Bytes()
}

// header is a title and a note set as lines of text, for the one renderer
// (tables) that draws none.
type header struct {
	lines  []line
	height int
}

type line struct {
	text string
	font charts.FontStyle
	h    int
}

func heading(title, note string, width int) header {
	var h header
	if title != "" {
		for _, l := range strings.Split(wrap(clip(title, maxTitle), width-2*tableMargin), "\n") {
			h.lines = append(h.lines, line{text: l, font: font(titleSize)})
		}
	}
	if note != "" {
		h.lines = append(h.lines, line{text: note, font: font(noteSize)})
	}
	m := painter(DefaultWidth, DefaultHeight)
	h.height = tableMargin
	for i, l := range h.lines {
		h.lines[i].h = m.MeasureText(l.text, 0, l.font).Height() + 6
		h.height += h.lines[i].h
	}
	if len(h.lines) > 0 {
		h.height += 4
	}
	return h
}

func (h header) draw(p *charts.Painter) {
	y := tableMargin
	for _, l := range h.lines {
		y += l.h
		p.Text(l.text, tableMargin, y-6, 0, l.font)
	}
}

// spans sizes columns by their longest text, within 1 to 4 shares, so a
// name column gets more room than a count.
func spans(header []string, data [][]string) []int {
	out := make([]int, len(header))
	for c, h := range header {
		longest := utf8.RuneCountInString(h)
		for _, row := range data {
			longest = max(longest, utf8.RuneCountInString(row[c]))
		}
		out[c] = min(max(longest/8, 1), 4)
	}
	return out
}

// aligns right-aligns the columns whose every value is a number.
func aligns(header []string, at []int, rows [][]any) []string {
	out := make([]string, len(header))
	for c, i := range at {
		numeric := len(rows) > 0
		for _, row := range rows {
			if row[i] == nil {
				continue
			}
			if _, err := number(row[i]); err != nil {
				numeric = false
				break
			}
		}
		if numeric {
			out[c] = charts.AlignRight
		} else {
			out[c] = charts.AlignLeft
		}
	}
	return out
}
