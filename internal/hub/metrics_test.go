package hub

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// The store's checkpoints, by mode and result, as the operator's scrape
// reads them.
func TestStoreCheckpointMetric(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	m.StoreCheckpoint("restart", 12*time.Millisecond, true)
	m.StoreCheckpoint("restart", 30*time.Millisecond, false)
	m.StoreCheckpoint("passive", 200*time.Millisecond, true)
	var nilMetrics *Metrics
	nilMetrics.StoreCheckpoint("passive", time.Second, true) // records nothing, never panics
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	for _, f := range fams {
		if f.GetName() == "tavern_store_checkpoint_seconds" {
			if _, err := expfmt.MetricFamilyToText(&text, f); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, want := range []string{
		`tavern_store_checkpoint_seconds_bucket{mode="restart",result="ok",le="0.01"} 0`,
		`tavern_store_checkpoint_seconds_bucket{mode="restart",result="ok",le="0.025"} 1`,
		`tavern_store_checkpoint_seconds_count{mode="restart",result="busy"} 1`,
		`tavern_store_checkpoint_seconds_sum{mode="restart",result="busy"} 0.03`,
		`tavern_store_checkpoint_seconds_bucket{mode="passive",result="ok",le="0.1"} 0`,
		`tavern_store_checkpoint_seconds_bucket{mode="passive",result="ok",le="0.25"} 1`,
		`tavern_store_checkpoint_seconds_count{mode="passive",result="ok"} 1`,
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("no %s in:\n%s", want, text.String())
		}
	}
}
