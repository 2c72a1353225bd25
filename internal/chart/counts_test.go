package chart

import (
	"regexp"
	"testing"
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
