// Package chart draws server-side SVG charts for the operator's console:
// the dashboard's time series (TimeSeries, Sparkline) and the data agent's
// charts of a query result, described by a declarative Spec (Render).
//
// Start with Spec: a chart type and the columns that go on x, y and group.
// Spec.Validate checks it against a result's columns with errors a model can
// act on; Render maps the rows onto github.com/go-analyze/charts, which does
// all the drawing. This package only decides what goes where and how it
// looks: one light theme, font sizes, label counts, legends under the chart,
// and the caps (MaxSeries, MaxPoints, MaxTableRows) past which a chart says
// what it left out.
//
// Output is SVG only and deterministic: the same input gives the same bytes,
// so charts are golden-tested (go test -update rewrites testdata/*.svg, which
// a reviewer can open in a browser). Text is laid out with the library's
// Roboto metrics; a page that serves Roboto gets exact spacing, others get a
// fallback sans-serif, for which labels leave some slack.
//
// Every function is safe for concurrent use and returns a new slice the
// caller owns.
package chart
