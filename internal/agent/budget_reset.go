package agent

import (
	"maps"
	"time"
)

// Reset replaces the counts of at's UTC day and the tables' own budgets
// with the store's, which every node of a cluster logs its calls to: the
// day's and each table's budget then hold over the nodes, not per node.
// Add goes on counting this node's calls until the next Reset. Counts of
// another day than today's are ignored.
func (b *Budget) Reset(at time.Time, total float64, spent, limits map[string]float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(b.now())
	if at.UTC().Format(time.DateOnly) != b.day {
		return
	}
	b.total = total
	b.spent = maps.Clone(spent)
	if b.spent == nil {
		b.spent = map[string]float64{}
	}
	b.limits = maps.Clone(limits)
	if b.limits == nil {
		b.limits = map[string]float64{}
	}
}
