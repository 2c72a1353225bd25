package tavern

import (
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"

	"tavern/internal/agent"
	"tavern/internal/openai/openaitest"
)

// TestPrometheusRules: deploy/prometheus/alerts.yml is read and checked
// by Prometheus' own rule parser (its PromQL and its templates), holds a
// rule for each of the console's alert rules, and names only metrics
// the server exports on /metrics (and up, which Prometheus makes for
// every target it scrapes).
func TestPrometheusRules(t *testing.T) {
	p := parser.NewParser(parser.Options{})
	groups, errs := rulefmt.ParseFile(filepath.Join("..", "..", "deploy", "prometheus", "alerts.yml"), false, model.UTF8Validation, p, slog.New(slog.DiscardHandler))
	if len(errs) > 0 {
		t.Fatalf("alerts.yml: %v", errs)
	}

	// The series of every vector appear once something was counted: one
	// model call, one commit (a player), one alert run.
	fake := openaitest.New(t, nil)
	cfg := testConfig(t)
	cfg.OpenAIBaseURL, cfg.Model = fake.URL, "llama3.1"
	s := startOp(t, cfg)
	if _, err := s.tv.runner.Narrative.Complete(agent.WithTable(context.Background(), "t1"),
		agent.Request{Agent: "narrative", Messages: []agent.Message{{Role: "user", Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	s.player("Ann")
	if err := s.tv.alerts.evaluate(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The model call is counted by the call log's writer, behind the
	// call: wait for it.
	var exported map[string]string // name → type
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		exported = metricTypes(t, s.srv.URL)
		if _, ok := exported["tavern_llm_requests_total"]; ok || time.Now().After(deadline) {
			break
		}
	}

	var alerts []string
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			expr, err := p.ParseExpr(r.Expr)
			if err != nil {
				t.Fatalf("%s: %v", r.Alert, err)
			}
			parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
				vs, ok := n.(*parser.VectorSelector)
				if !ok {
					return nil
				}
				name := vs.Name
				if name == "up" {
					return nil
				}
				base := name
				for _, suf := range []string{"_bucket", "_sum", "_count"} {
					if b, ok := strings.CutSuffix(name, suf); ok && exported[b] == "histogram" {
						base = b
					}
				}
				if _, ok := exported[base]; !ok {
					t.Errorf("rule %s reads %s, which /metrics does not export", r.Alert, name)
				}
				return nil
			})
		}
	}
	want := []string{"TavernModelErrorRate", "TavernModelLatencyP95", "TavernSpendPerHour", "TavernActionWaiting", "TavernStoreCommitLatency", "TavernNodeMissing"}
	if strings.Join(alerts, " ") != strings.Join(want, " ") {
		t.Errorf("rules %v, want %v (one per console alert rule)", alerts, want)
	}
}

// metricTypes returns the type of every metric base's /metrics exports,
// read by Prometheus' text parser.
func metricTypes(t *testing.T, base string) map[string]string {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer admin")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for name, f := range fams {
		types[name] = strings.ToLower(f.GetType().String())
	}
	return types
}
