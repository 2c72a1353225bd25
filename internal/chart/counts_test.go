package chart

import (
	"math"
	"regexp"
	"testing"
	"time"
)

// TestCountAxis: a chart of small counts labels its value axis with whole
// numbers only.
func TestCountAxis(t *testing.T) {
	label := regexp.MustCompile(`>(\d+\.\d+)<`)
	for _, typ := range []string{Bar, Line} {
		svg, err := Render(Spec{Type: typ, X: "outcome", Y: []string{"fights"}}, []string{"outcome", "fights"},
			[][]any{{"party won", int64(3)}, {"party died", int64(1)}, {"party fled", int64(2)}})
		if err != nil {
			t.Fatal(err)
		}
		if m := label.FindAllSubmatch(svg, -1); len(m) > 0 {
			t.Errorf("%s: fractional axis labels %q", typ, m[0][1])
		}
	}
}

// TestCountAxisTimeSeries: the console's charts of turns and calls per
// minute, counts too, label whole numbers only.
func TestCountAxisTimeSeries(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	times := []time.Time{t0, t0.Add(time.Minute), t0.Add(2 * time.Minute)}
	svg, err := TimeSeries("calls", times, []Series{{Name: "calls", Values: []float64{0, 1, math.NaN()}}}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`>(\d+\.\d+)<`).FindSubmatch(svg); m != nil {
		t.Errorf("fractional axis label %q", m[1])
	}
}
