package web

import (
	"testing"

	"tavern/internal/chart"
	"tavern/internal/dataset"
)

func TestStepCaption(t *testing.T) {
	for _, c := range []struct {
		name string
		step dataset.Step
		want string
	}{
		{"a query keeps its description", dataset.Step{Description: "top tables"}, "top tables"},
		{"a chart drops a caption that is its title", dataset.Step{Description: "Most turns", Chart: &chart.Spec{Title: "Most turns"}}, ""},
		{"a chart keeps a caption of its own", dataset.Step{Description: "by day", Chart: &chart.Spec{Title: "Turns"}}, "by day"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := stepCaption(c.step); got != c.want {
				t.Errorf("stepCaption = %q, want %q", got, c.want)
			}
		})
	}
}
