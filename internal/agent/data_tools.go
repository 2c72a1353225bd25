package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"tavern/internal/chart"
	"tavern/internal/dataset"
)

// DataSource is the read-only data the data agent queries.
// *dataset.Dataset satisfies it; it must be safe for concurrent use.
type DataSource interface {
	// Query runs one read statement over the curated views; its errors
	// are EINVALID sentences for the model when the statement is at fault.
	Query(ctx context.Context, sql string) (*dataset.Result, error)
	// Describe lists the curated views with row counts and meanings.
	Describe(ctx context.Context) (dataset.Description, error)
}

// DataDeps is what the data agent's toolset depends on.
type DataDeps struct {
	Data DataSource
}

// DataRun is the shared mutable context of the tools of one data-agent
// run (seed 003's AgentContext): query_data writes the last result set
// (the seed's current_dataframe), visualize reads it. It belongs to one
// run and is not safe for concurrent use.
type DataRun struct {
	// Last is the result of the last query that ran, nil before.
	Last *dataset.Result
	// Steps are the queries and charts so far, refused ones included.
	Steps []dataset.Step
	// ChartSVG is the last chart drawn.
	ChartSVG string
	// Progress, if set, hears each step as it happens (see the
	// dataset.Event constants); it must not block for long.
	Progress func(event string, step dataset.Step)
}

func (r *DataRun) report(event string, s dataset.Step) {
	if r.Progress != nil {
		r.Progress(event, s)
	}
}

// step records s and reports it.
func (r *DataRun) step(event string, s dataset.Step) {
	r.Steps = append(r.Steps, s)
	r.report(event, s)
}

// previewRows is how many rows of a result the model reads back.
const previewRows = 20

// maxToolResultBytes bounds the text of a query_data result that goes
// back to the model and into the stored conversation (PROTOCOL.md, POST
// /api/admin/ask): 64 KiB is about 16k tokens, a fair share of a context
// window, and each follow-up question resends it.
const maxToolResultBytes = 64 << 10

// NewDataTools returns the data agent's toolset (seed 003): query_data
// and visualize over deps.Data, and the output tool answer. The tools
// keep what one run shares in its ToolContext's DataRun.
func NewDataTools(deps DataDeps) *Toolset {
	return NewToolset(queryDataTool(deps.Data), visualizeTool(), answerTool())
}

func dataRun(tc *ToolContext) *DataRun {
	if tc.Data == nil {
		tc.Data = &DataRun{}
	}
	return tc.Data
}

func queryDataTool(src DataSource) *Tool {
	t := &Tool{Name: "query_data",
		Description: "Run one read-only SQL statement (SQLite dialect: SELECT, WITH … SELECT or VALUES) over the curated views listed in the system prompt. " +
			"The result becomes the current result set that visualize draws. You get its size, columns and first rows back.",
		Parameters: object([]string{"sql", "description"}, map[string]any{
			"sql":         str("One SELECT statement over the v_* views. No other tables, no PRAGMA, ATTACH or writes."),
			"description": str("What this query computes, in a short sentence for the operator."),
		})}
	t.Run = func(ctx context.Context, tc *ToolContext, args json.RawMessage) (string, error) {
		var a struct {
			SQL         string `json:"sql"`
			Description string `json:"description"`
		}
		if err := decode(t, args, &a); err != nil {
			return "", err
		}
		run := dataRun(tc)
		run.report(dataset.EventSQL, dataset.Step{Kind: dataset.StepQuery, SQL: a.SQL, Description: a.Description})
		r, err := src.Query(ctx, a.SQL)
		run.step(dataset.EventRows, dataset.QueryStep(a.SQL, a.Description, r, err))
		if err != nil {
			return "", err
		}
		run.Last = r
		return "Query executed successfully.\nResult: " + r.Text(previewRows, maxToolResultBytes), nil
	}
	return t
}

func visualizeTool() *Tool {
	spec := object([]string{"type"}, map[string]any{
		"type":  strEnum("Chart type.", chart.Types...),
		"x":     str("Column of the current result along the x axis (slice names for a pie; optional first column for a table)."),
		"y":     strList("Numeric columns drawn as series (exactly one for a pie or with group; the columns shown for a table)."),
		"group": str("Optional column whose values split y into one series each (long data: x, group, y)."),
		"title": str("Optional; the title argument wins."),
	})
	t := &Tool{Name: "visualize",
		Description: "Draw the current result set (the last query_data result) as a chart from a declarative spec: no code. " +
			"Columns must exist in the result; y columns must be numeric. The operator sees the chart and the spec.",
		Parameters: object([]string{"spec", "title", "description"}, map[string]any{
			"spec":        spec,
			"title":       str("Chart title."),
			"description": str("What the chart shows, in a short sentence."),
		})}
	t.Run = func(_ context.Context, tc *ToolContext, args json.RawMessage) (string, error) {
		var a struct {
			Spec        chart.Spec `json:"spec"`
			Title       string     `json:"title"`
			Description string     `json:"description"`
		}
		if err := decode(t, args, &a); err != nil {
			return "", err
		}
		if a.Title != "" {
			a.Spec.Title = a.Title
		}
		run := dataRun(tc)
		s := dataset.ChartStep(a.Spec, a.Description, run.Last)
		run.step(dataset.EventChart, s)
		if s.Error != "" {
			return "", errf("%s", capitalise(s.Error))
		}
		run.ChartSVG = s.SVG
		return fmt.Sprintf("Chart drawn: %q, a %s chart of %d rows. The operator sees it; now give your answer.", a.Spec.Title, a.Spec.Type, len(run.Last.Rows)), nil
	}
	return t
}

func answerTool() *Tool {
	return defineOutput("answer", "Give the operator the final answer: the insight in one to three sentences, with the numbers that matter. Call it last, once.", []string{"text"},
		map[string]any{"text": str("The answer, in plain words.")},
		func(tc *ToolContext, a struct {
			Text string `json:"text"`
		}) (any, error) {
			tc.Output = &Output{Tool: "answer", Narration: strings.TrimSpace(a.Text)}
			return "Answer recorded.", nil
		})
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
