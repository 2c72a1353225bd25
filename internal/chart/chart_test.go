package chart

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"tavern/internal/golden"
)

// usage is a result set like the data agent's "cost per model per day".
var usageColumns = []string{"day", "model", "calls", "cost_usd"}

func usageRows() [][]any {
	var rows [][]any
	for d := 1; d <= 7; d++ {
		for m, model := range []string{"gpt-4o-mini", "offline", "claude-haiku"} {
			rows = append(rows, []any{
				fmt.Sprintf("2024-05-%02d", d), // SQLite dates come back as text
				model,
				int64(40*d + 13*m*d%50),
				float64(d*(m+1)) * 0.0137,
			})
		}
	}
	return rows
}

var tablesColumns = []string{"table", "turns"}

var tablesRows = [][]any{
	{"The Sunken Crypt", int64(312)},
	{"Goblin Market", []byte("188")}, // a blob holding a number still counts
	{"Dragon's Maw", "97"},
	{"Tavern Brawl", 45.0},
	{"Lost Caravan", int64(12)},
}

// goldenCharts is one chart per type, kept in testdata as SVG so a reviewer can
// open them, and compared byte for byte.
var goldenCharts = []struct {
	name    string
	spec    Spec
	columns []string
	rows    [][]any
	want    []string // text that must be drawn: title, series names
}{
	{"bar", Spec{Type: Bar, X: "day", Y: []string{"calls"}, Group: "model", Title: "LLM calls per model per day"},
		usageColumns, usageRows(), []string{"LLM calls per model per day", "gpt-4o-mini", "offline", "claude-haiku", "2024-05-01"}},
	{"bar-horizontal", Spec{Type: Bar, X: "table", Y: []string{"turns"}, Title: "Tables that played most"},
		tablesColumns, tablesRows, []string{"Tables that played most", "The Sunken Crypt", "Lost Caravan", "turns"}},
	{"line", Spec{Type: Line, X: "day", Y: []string{"cost_usd"}, Group: "model", Title: "LLM cost per model per day"},
		usageColumns, usageRows(), []string{"LLM cost per model per day", "gpt-4o-mini", "claude-haiku", "cost_usd"}},
	{"area", Spec{Type: Area, X: "day", Y: []string{"calls"}, Group: "model", Title: "Calls per model"},
		usageColumns, usageRows(), []string{"Calls per model", "calls", "gpt-4o-mini", "claude-haiku"}},
	{"pie", Spec{Type: Pie, X: "table", Y: []string{"turns"}, Title: "Share of turns"},
		tablesColumns, tablesRows, []string{"Share of turns", "The Sunken Crypt: 47.7%", "Lost Caravan"}},
	{"scatter", Spec{Type: Scatter, X: "calls", Y: []string{"cost_usd"}, Title: "Cost against calls"},
		usageColumns, usageRows(), []string{"Cost against calls", "cost_usd", "calls"}},
	{"table", Spec{Type: Table, Title: "LLM usage"},
		usageColumns, usageRows()[:5], []string{"LLM usage", "day", "model", "cost_usd", "gpt-4o-mini", "0.0137"}},
}

func TestRenderGolden(t *testing.T) {
	for _, tc := range goldenCharts {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Render(tc.spec, tc.columns, tc.rows)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			drawn := svgText(t, got)
			for _, w := range tc.want {
				if !strings.Contains(drawn, w) {
					t.Errorf("the SVG does not draw %q; it draws: %s", w, drawn)
				}
			}
			again, err := Render(tc.spec, tc.columns, tc.rows)
			if err != nil || !bytes.Equal(got, again) {
				t.Errorf("a second Render gave other bytes (err %v)", err)
			}
			compareGolden(t, tc.name, got)
		})
	}
}

// TestRenderConcurrent renders every chart at once: the library keeps
// global state (themes, fonts), and the race detector watches it.
func TestRenderConcurrent(t *testing.T) {
	want := make([][]byte, len(goldenCharts))
	for i, tc := range goldenCharts {
		want[i], _ = Render(tc.spec, tc.columns, tc.rows)
	}
	var wg sync.WaitGroup
	for range 3 {
		for i, tc := range goldenCharts {
			wg.Go(func() {
				got, err := Render(tc.spec, tc.columns, tc.rows)
				if err != nil || !bytes.Equal(got, want[i]) {
					t.Errorf("%s: concurrent render differs (err %v)", tc.name, err)
				}
			})
		}
	}
	wg.Wait()
}

// TestRenderRefuses checks that Render validates, and refuses values it
// cannot draw with an error that names the column, row and value.
func TestRenderRefuses(t *testing.T) {
	tests := []struct {
		name    string
		spec    Spec
		columns []string
		rows    [][]any
		want    string
	}{
		{"invalid spec", Spec{Type: Bar, X: "dayz", Y: []string{"calls"}}, usageColumns, usageRows(), `column "dayz" is not in the result`},
		{"text as y", Spec{Type: Bar, X: "day", Y: []string{"model"}}, usageColumns, usageRows(),
			`column "model" is not numeric: row 1 holds "gpt-4o-mini"`},
		{"text in a pivot", Spec{Type: Line, X: "day", Y: []string{"model"}, Group: "calls"}, usageColumns, usageRows(),
			`column "model" is not numeric`},
		{"text in a pie", Spec{Type: Pie, X: "turns", Y: []string{"table"}}, tablesColumns, tablesRows,
			`column "table" is not numeric: row 1 holds "The Sunken Crypt"`},
		{"negative slice", Spec{Type: Pie, X: "table", Y: []string{"turns"}}, tablesColumns, [][]any{{"a", int64(3)}, {"b", int64(-1)}},
			`a pie needs sizes of zero or more`},
		{"duplicate pivot cell", Spec{Type: Bar, X: "day", Y: []string{"calls"}, Group: "model"}, []string{"day", "model", "calls"},
			[][]any{{"mon", "a", int64(1)}, {"mon", "b", int64(2)}, {"mon", "a", int64(3)}},
			"two rows have day = mon and model = a; aggregate them in the query (GROUP BY day, model)"},
		{"infinity", Spec{Type: Line, X: "day", Y: []string{"calls"}}, []string{"day", "calls"}, [][]any{{"mon", math.Inf(1)}},
			`column "calls" is not numeric`},
		{"short row", Spec{Type: Line, X: "day", Y: []string{"calls"}}, []string{"day", "calls"}, [][]any{{"mon"}},
			"row 1 has 1 values for 2 columns"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Render(tc.spec, tc.columns, tc.rows)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Render: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestPivot(t *testing.T) {
	spec := Spec{Type: Line, X: "day", Y: []string{"calls"}, Group: "model"}
	columns := []string{"day", "model", "calls"}
	rows := [][]any{
		{"tue", "b", int64(5)}, // x and groups keep the order they first appear in
		{"mon", "a", int64(1)},
		{"mon", "b", nil}, // NULL is a gap
		{"wed", "a", "3.5"},
	}
	d, err := extract(spec, columns, rows)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(d.x, ","), "tue,mon,wed"; got != want {
		t.Errorf("x = %s, want %s", got, want)
	}
	if got, want := strings.Join(d.names, ","), "b,a"; got != want {
		t.Errorf("series = %s, want %s", got, want)
	}
	want := [][]float64{{5, math.NaN(), math.NaN()}, {math.NaN(), 1, 3.5}}
	if got := fmt.Sprint(d.values); got != fmt.Sprint(want) {
		t.Errorf("values = %v, want %v", got, want)
	}
}

func TestPivotKeepsLargestGroups(t *testing.T) {
	var rows [][]any
	for g := range 15 {
		for _, day := range []string{"mon", "tue"} {
			rows = append(rows, []any{day, fmt.Sprintf("agent %02d", g), int64(g)})
		}
	}
	spec := Spec{Type: Bar, X: "day", Y: []string{"turns"}, Group: "agent", Title: "Turns"}
	d, err := extract(spec, []string{"day", "agent", "turns"}, rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.names) != MaxSeries || d.names[0] != "agent 03" || d.names[MaxSeries-1] != "agent 14" {
		t.Errorf("series = %v, want agent 03 … agent 14 (the largest, in order)", d.names)
	}
	out, err := Render(spec, []string{"day", "agent", "turns"}, rows)
	if err != nil {
		t.Fatal(err)
	}
	if drawn := svgText(t, out); !strings.Contains(drawn, "the 12 largest of 15 agent values") || strings.Contains(drawn, "agent 02") {
		t.Errorf("the chart should say it kept 12 of 15 groups and leave agent 02 out; it draws %s", drawn)
	}
}

func TestRenderCaps(t *testing.T) {
	var many [][]any
	for i := range 600 {
		many = append(many, []any{int64(i), int64(i * i)})
	}
	cols := []string{"n", "square"}
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"points", Spec{Type: Line, X: "n", Y: []string{"square"}, Title: "Squares"}, "first 500 of 600 rows"},
		{"table rows", Spec{Type: Table, Title: "Squares"}, "first 20 of 600 rows"},
		{"slices", Spec{Type: Pie, X: "n", Y: []string{"square"}, Title: "Squares"}, "the 11 largest of 599 slices, the rest as other"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Render(tc.spec, cols, many)
			if err != nil {
				t.Fatal(err)
			}
			if drawn := svgText(t, out); !strings.Contains(drawn, tc.want) {
				t.Errorf("the chart should say %q; it draws %s", tc.want, drawn)
			}
		})
	}
	out, _ := Render(Spec{Type: Table}, cols, many)
	if drawn := svgText(t, out); !strings.Contains(drawn, "| 19 | 361 |") || strings.Contains(drawn, "| 20 |") {
		t.Errorf("the table should end at row 19; it draws %s", drawn)
	}
}

func TestRenderEmpty(t *testing.T) {
	for _, typ := range Types {
		t.Run(typ, func(t *testing.T) {
			out, err := Render(Spec{Type: typ, X: "day", Y: []string{"calls"}, Title: "Calls"}, []string{"day", "calls"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if drawn := svgText(t, out); !strings.Contains(drawn, "Calls") || !strings.Contains(drawn, "no rows") {
				t.Errorf("an empty %s should say the query returned no rows; it draws %s", typ, drawn)
			}
		})
	}
}

// hour is 61 minutes from 12:00 to 13:00, as the dashboard samples its hour.
func hour() ([]time.Time, []Series) {
	start := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	var times []time.Time
	turns, errs := make([]float64, 61), make([]float64, 61)
	for i := range 61 {
		times = append(times, start.Add(time.Duration(i)*time.Minute))
		turns[i], errs[i] = float64(i%7+i/10), float64(i%3)
	}
	errs[30] = math.NaN() // a minute with no data
	return times, []Series{{"turns", turns}, {"errors", errs}}
}

func TestTimeSeries(t *testing.T) {
	times, series := hour()
	out, err := TimeSeries("Turns per minute", times, series, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	drawn := svgText(t, out)
	for _, w := range []string{"Turns per minute", "turns", "errors", "| 12:00 |", "| 12:10 |", "| 13:00 |"} {
		if !strings.Contains(drawn, w) {
			t.Errorf("the chart does not draw %q; it draws %s", w, drawn)
		}
	}
	if strings.Contains(drawn, "12:07") {
		t.Errorf("labels should fall on round times; it draws %s", drawn)
	}
	if !strings.Contains(string(out), `viewBox="0 0 720 320"`) {
		t.Errorf("the default size should be 720x320")
	}
	compareGolden(t, "timeseries", out)

	day := make([]time.Time, 97)
	for i := range day {
		day[i] = time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 15 * time.Minute)
	}
	out, err = TimeSeries("Calls, last day", day, []Series{{"calls", make([]float64, 97)}}, 480, 200)
	if err != nil {
		t.Fatal(err)
	}
	if drawn := svgText(t, out); !strings.Contains(drawn, "| 00:00 |") || !strings.Contains(drawn, ":00 |") || strings.Contains(drawn, ":15 |") {
		t.Errorf("a day should be labelled on the hour; it draws %s", drawn)
	}
	if !strings.Contains(string(out), `viewBox="0 0 480 200"`) {
		t.Errorf("the size should be 480x200")
	}
}

func TestTimeSeriesEmpty(t *testing.T) {
	times, _ := hour()
	tests := []struct {
		name   string
		times  []time.Time
		series []Series
	}{
		{"no times", nil, nil},
		{"no series", times, nil},
		{"only gaps", times[:2], []Series{{"turns", []float64{math.NaN(), math.NaN()}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := TimeSeries("Turns per minute", tc.times, tc.series, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if drawn := svgText(t, out); !strings.Contains(drawn, "Turns per minute — no data yet") {
				t.Errorf("an empty chart should say no data yet; it draws %s", drawn)
			}
			if tc.name == "no times" {
				compareGolden(t, "timeseries-empty", out)
			}
		})
	}
	if _, err := TimeSeries("x", times, []Series{{"short", []float64{1}}}, 0, 0); err == nil || !strings.Contains(err.Error(), `series "short" has 1 values for 61 times`) {
		t.Errorf("a series shorter than times: %v, want an error", err)
	}
}

func TestSparkline(t *testing.T) {
	_, series := hour()
	out, err := Sparkline(series[0].Values, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if drawn := svgText(t, out); drawn != "" {
		t.Errorf("a sparkline draws no text; it draws %s", drawn)
	}
	if !strings.Contains(string(out), `viewBox="0 0 120 28"`) || !strings.Contains(string(out), "<path") {
		t.Errorf("a sparkline should be a 120x28 line: %s", out)
	}
	compareGolden(t, "sparkline", out)
	out, err = Sparkline([]float64{math.NaN()}, 60, 20)
	if err != nil || strings.Count(string(out), "<path") != 1 || !strings.Contains(string(out), `viewBox="0 0 60 20"`) {
		t.Errorf("a sparkline without values should be a blank 60x20 background (err %v): %s", err, out)
	}
}

// svgText parses out as XML, fails the test unless it is one <svg> document,
// and returns the text of its <text> elements as "| a | b |".
func svgText(t *testing.T, out []byte) string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(out))
	var texts []string
	var root string
	inText := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v\n%s", err, out)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
			inText = tok.Name.Local == "text"
		case xml.EndElement:
			inText = false
		case xml.CharData:
			if inText {
				texts = append(texts, string(tok))
			}
		}
	}
	if root != "svg" {
		t.Fatalf("the document's root is <%s>, want <svg>", root)
	}
	if len(texts) == 0 {
		return ""
	}
	return "| " + strings.Join(texts, " | ") + " |"
}

// compareGolden compares out with testdata/name.svg, rewriting it under -update.
func compareGolden(t *testing.T, name string, out []byte) {
	t.Helper()
	golden.Compare(t, filepath.Join("testdata", name+".svg"), out)
}

func TestThin(t *testing.T) {
	days := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("2024-05-%02d", i%31+1)
		}
		return out
	}
	tests := []struct {
		name        string
		labels      []string
		centred     bool
		wantAll     bool // every label printed
		wantFirst   bool // the first label printed
		wantLast    bool // the last label printed
		wantLibrary bool // thinning left to the library
	}{
		{"a week of bars", days(7), true, true, true, true, false},
		{"a month of bars", days(30), true, false, true, false, false},
		{"a month of area", days(30), false, false, false, true, false},
		{"many points", days(500), false, false, true, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, count := thin(tc.labels, DefaultWidth, tc.centred)
			if tc.wantLibrary {
				if count >= len(tc.labels) || count < 2 || !slices.Equal(got, tc.labels) {
					t.Errorf("thin gave count %d and changed labels; want the labels kept and a count under %d", count, len(tc.labels))
				}
				return
			}
			if count != len(tc.labels) {
				t.Errorf("count = %d, want %d (every position, some blank)", count, len(tc.labels))
			}
			printed := slices.IndexFunc(got, func(s string) bool { return s == "" }) == -1
			if printed != tc.wantAll || (got[0] != "") != tc.wantFirst || (got[len(got)-1] != "") != tc.wantLast {
				t.Errorf("printed %q; want all %v, first %v, last %v", got, tc.wantAll, tc.wantFirst, tc.wantLast)
			}
			step := minStep(tc.labels, DefaultWidth, tc.centred)
			last := -step
			for i, l := range got {
				if l == "" {
					continue
				}
				if i-last < step {
					t.Errorf("labels %d and %d are printed %d positions apart, want at least %d", last, i, i-last, step)
				}
				last = i
			}
		})
	}
}

// TestTimeSeriesCountAxis: a time series of small counts (turns, calls)
// labels its axis with whole numbers only, one per number.
func TestTimeSeriesCountAxis(t *testing.T) {
	times := make([]time.Time, 12)
	turns := make([]float64, 12)
	for i := range times {
		times[i] = time.Date(2026, 1, 1, 10, i*5, 0, 0, time.UTC)
	}
	turns[3] = 8
	svg, err := TimeSeries("Turns", times, []Series{{Name: "turns", Values: turns}}, 720, 280)
	if err != nil {
		t.Fatal(err)
	}
	labels := regexp.MustCompile(`>([0-9.]+)</text>`).FindAllStringSubmatch(string(svg), -1)
	var got []string
	for _, l := range labels {
		got = append(got, l[1])
	}
	if strings.Join(got, " ") != "8 7 6 5 4 3 2 1 0" {
		t.Errorf("the axis of a count reads %v, want 8 down to 0 by ones", got)
	}
}
