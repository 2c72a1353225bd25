package chart

import "testing"

func TestBarSize(t *testing.T) {
	for _, c := range []struct {
		name                  string
		slots, series, across int
		maxPixels             float64
		libraryDefault        bool
	}{
		{name: "one row is capped", slots: 1, series: 1, across: DefaultWidth, maxPixels: maxBar},
		{name: "two rows of three series are capped", slots: 2, series: 3, across: DefaultWidth, maxPixels: maxBar},
		{name: "many rows keep the default", slots: 20, series: 1, across: DefaultWidth, libraryDefault: true},
		{name: "no rows", slots: 0, series: 1, across: DefaultWidth, libraryDefault: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := barSize(c.slots, c.series, c.across)
			if c.libraryDefault {
				if got != 0 {
					t.Errorf("barSize = %v, want 0 (the library's default)", got)
				}
				return
			}
			slot := float64(c.across-100) / float64(c.slots)
			if px := slot * got / float64(c.series); got <= 0 || px > c.maxPixels+0.01 {
				t.Errorf("barSize = %v: bars %.1f px wide, want (0, %v]", got, px, c.maxPixels)
			}
		})
	}
}
