package dataset

import (
	"encoding/json"
	"time"

	"tavern/internal/chart"
)

// Step kinds.
const (
	StepQuery = "query" // a query_data call: SQL, then its rows or its error
	StepChart = "chart" // a visualize call: a spec, then its SVG or its error
)

// Step is one thing done while answering a question (PROTOCOL.md's
// POST /api/admin/ask steps): a query with the rows it returned, or a
// chart with its SVG, or either with the error that refused it. Kind,
// Description, Truncated, RowsCut, Cut, Title and SVG are additive to the
// protocol.
type Step struct {
	Kind        string `json:"kind"`
	Description string `json:"description,omitempty"`
	// SQL is the statement as the model (or the analyst) wrote it.
	SQL     string   `json:"sql,omitempty"`
	Columns []string `json:"columns,omitempty"`
	Rows    [][]any  `json:"rows,omitempty"`
	// Truncated, RowsCut and Cut are the Result's: what was left out.
	Truncated bool      `json:"truncated,omitempty"`
	RowsCut   string    `json:"rows_cut,omitempty"`
	Cut       []CellCut `json:"cut,omitempty"`
	// Chart is the declarative spec; SVG its drawing.
	Chart *chart.Spec `json:"chart,omitempty"`
	SVG   string      `json:"svg,omitempty"`
	// Error is the sentence that refused the step; nothing changed.
	Error string `json:"error,omitempty"`
}

// Reply is the answer to one question in a conversation: the steps taken,
// the last chart drawn and the answer in words.
type Reply struct {
	Conversation string `json:"conversation"`
	Question     string `json:"question"`
	Answer       string `json:"answer"`
	Steps        []Step `json:"steps"`
	ChartSVG     string `json:"chart_svg,omitempty"`
	// Offline reports that the offline analyst answered (no model, or
	// the model failed: Note then says so).
	Offline bool   `json:"offline,omitempty"`
	Note    string `json:"note,omitempty"`
}

// Bound keeps the rows of the reply's steps within max bytes of JSON in
// all (PROTOCOL.md: the answer is bounded as a result is): the newest
// steps keep theirs, since the answer rests on them, and older ones lose
// their rows with RowsCut CutBytes.
func (r *Reply) Bound(max int) {
	total := 0
	for i := len(r.Steps) - 1; i >= 0; i-- {
		s := &r.Steps[i]
		if len(s.Rows) == 0 {
			continue
		}
		b, _ := json.Marshal(s.Rows)
		if total += len(b); total > max {
			s.Rows, s.Cut, s.RowsCut, s.Truncated = [][]any{}, nil, CutBytes, true
		}
	}
}

// QueryStep is the step of a query that ran (r) or was refused (err).
func QueryStep(sql, description string, r *Result, err error) Step {
	s := Step{Kind: StepQuery, SQL: sql, Description: description}
	if err != nil {
		s.Error = err.Error()
		return s
	}
	s.Columns, s.Rows, s.Truncated, s.RowsCut, s.Cut = r.Columns, r.Rows, r.Truncated, r.RowsCut, r.Cut
	return s
}

// ChartStep draws spec over r (chart.Render validates it) and returns the
// step with its SVG, or with the error that refused it.
func ChartStep(spec chart.Spec, description string, r *Result) Step {
	s := Step{Kind: StepChart, Description: description, Chart: &spec}
	if r == nil {
		s.Error = "There is no result to chart yet: run query_data first."
		return s
	}
	svg, err := chart.Render(spec, r.Columns, r.Rows)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	s.SVG = string(svg)
	return s
}

// Steps are the analyst's answer as steps: its query and its chart.
func (a Answer) Steps() []Step {
	if a.Result == nil {
		return []Step{}
	}
	steps := []Step{QueryStep(a.SQL, a.Shape, a.Result, nil)}
	if a.Chart != nil {
		steps = append(steps, ChartStep(*a.Chart, a.Chart.Title, a.Result))
	}
	return steps
}

// Progress events, in the order a question is worked on: a query about to
// run, its rows (or its error), a chart (or its error), then the reply.
const (
	EventSQL    = "sql"
	EventRows   = "rows"
	EventChart  = "chart"
	EventAnswer = "answer"
)

// ConversationSummary is one past conversation of the data agent, as
// GET /api/admin/ask lists them.
type ConversationSummary struct {
	Conversation string    `json:"conversation"`
	StartedAt    time.Time `json:"started_at"`
	UpdatedAt    time.Time `json:"updated_at"`
	Questions    int       `json:"questions"`
	First        string    `json:"first_question"`
}

// ConversationTurn is one question of a stored conversation with its
// answer and the SQL that ran for it.
type ConversationTurn struct {
	Turn     int      `json:"turn"`
	Question string   `json:"question"`
	Answer   string   `json:"answer"`
	SQL      []string `json:"sql"`
}
