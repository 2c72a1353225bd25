package agent

import (
	"maps"
	"time"
)

// Reset brings the counts of at's UTC day up to the store's, which every
// node of a cluster logs its calls to, and takes the tables' own budgets
// from it: the day's and each table's budget then hold over the nodes,
// not per node. Add goes on counting this node's calls until the next
// Reset. Counts of another day than today's are ignored.
func (b *Budget) Reset(at time.Time, total float64, spent, limits map[string]float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(b.now())
	if at.UTC().Format(time.DateOnly) != b.day {
		return
	}
	// Spend only grows within a day, and the store may not hold this
	// node's latest calls yet (the call log is written behind the turns):
	// the larger of the two counts is the truer one.
	b.total = max(b.total, total)
	for id, usd := range spent {
		b.spent[id] = max(b.spent[id], usd)
	}
	b.limits = maps.Clone(limits)
	if b.limits == nil {
		b.limits = map[string]float64{}
	}
}
