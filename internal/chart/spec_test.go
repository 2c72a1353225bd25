package chart

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	cols := []string{"day", "calls", "cost_usd", "model"}
	tests := []struct {
		name string
		spec Spec
		want string // part of the error; "" for a valid spec
	}{
		{"bar", Spec{Type: Bar, X: "day", Y: []string{"calls"}}, ""},
		{"grouped line", Spec{Type: Line, X: "day", Y: []string{"calls"}, Group: "model"}, ""},
		{"pie", Spec{Type: Pie, X: "model", Y: []string{"calls"}}, ""},
		{"table of all", Spec{Type: Table}, ""},
		{"table of some", Spec{Type: Table, X: "model", Y: []string{"calls"}}, ""},
		{"no type", Spec{X: "day", Y: []string{"calls"}}, "the chart has no type; use one of: bar, line, area, pie, scatter, table"},
		{"unknown type", Spec{Type: "donut", X: "day", Y: []string{"calls"}}, `chart type "donut" is not supported`},
		{"no x", Spec{Type: Bar, Y: []string{"calls"}}, "a bar chart needs x"},
		{"unknown x", Spec{Type: Bar, X: "dayz", Y: []string{"calls"}}, `column "dayz" is not in the result; columns: day, calls, cost_usd, model`},
		{"x in the wrong case", Spec{Type: Bar, X: "Day", Y: []string{"calls"}}, `did you mean "day"?`},
		{"no y", Spec{Type: Line, X: "day"}, "a line chart needs y: at least one numeric column"},
		{"unknown y", Spec{Type: Line, X: "day", Y: []string{"calls", "tokens"}}, `column "tokens" is not in the result`},
		{"y is x", Spec{Type: Line, X: "day", Y: []string{"day"}}, `column "day" is already x`},
		{"y twice", Spec{Type: Line, X: "day", Y: []string{"calls", "calls"}}, `column "calls" appears twice in y`},
		{"too many y", Spec{Type: Line, X: "day", Y: []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m"}}, "at most 12 y columns, not 13"},
		{"pie of two", Spec{Type: Pie, X: "model", Y: []string{"calls", "cost_usd"}}, "a pie chart takes exactly one y column"},
		{"pie grouped", Spec{Type: Pie, X: "model", Y: []string{"calls"}, Group: "day"}, "a pie chart cannot be grouped"},
		{"unknown group", Spec{Type: Bar, X: "day", Y: []string{"calls"}, Group: "agent"}, `column "agent" is not in the result`},
		{"group is x", Spec{Type: Bar, X: "day", Y: []string{"calls"}, Group: "day"}, `group "day" must be a column other than x and y`},
		{"group with two y", Spec{Type: Bar, X: "day", Y: []string{"calls", "cost_usd"}, Group: "model"}, "with group, y takes exactly one column"},
		{"table grouped", Spec{Type: Table, Group: "model"}, "a table cannot be grouped"},
		{"table of unknown", Spec{Type: Table, Y: []string{"secret"}}, `column "secret" is not in the result`},
		{"table column twice", Spec{Type: Table, X: "day", Y: []string{"day"}}, `column "day" appears twice in the table`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.spec.Validate(cols)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate: %v, want no error", err)
			case tc.want != "" && err == nil:
				t.Errorf("Validate: no error, want %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Errorf("Validate: %q, want it to contain %q", err, tc.want)
			}
		})
	}
	if err := (Spec{Type: Table}).Validate(nil); err == nil || !strings.Contains(err.Error(), "no columns") {
		t.Errorf("Validate with no columns: %v, want an error about no columns", err)
	}
}

func TestNumber(t *testing.T) {
	tests := []struct {
		in   any
		want float64 // NaN for a gap
		err  bool
	}{
		{int64(3), 3, false},
		{2.5, 2.5, false},
		{" 1e3 ", 1000, false},
		{[]byte("-4"), -4, false},
		{true, 1, false},
		{nil, math.NaN(), false},
		{"", math.NaN(), false},
		{"12 gp", 0, true},
		{math.Inf(-1), 0, true},
		{time.Unix(0, 0), 0, true},
	}
	for _, tc := range tests {
		got, err := number(tc.in)
		if tc.err {
			if !errors.Is(err, errNotNumber) {
				t.Errorf("number(%#v) = %v, %v; want errNotNumber", tc.in, got, err)
			}
			continue
		}
		if err != nil || !(got == tc.want || math.IsNaN(got) && math.IsNaN(tc.want)) {
			t.Errorf("number(%#v) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestLabel(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{nil, "(null)"},
		{int64(42), "42"},
		{0.1 + 0.2, "0.3"},
		{[]byte("blob"), "blob"},
		{"two\nlines", "two lines"},
		{time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC), "2024-05-01"},
		{time.Date(2024, 5, 1, 13, 5, 0, 0, time.UTC), "2024-05-01 13:05"},
		{strings.Repeat("x", 50), strings.Repeat("x", 39) + "…"},
	}
	for _, tc := range tests {
		if got := label(tc.in); got != tc.want {
			t.Errorf("label(%#v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
