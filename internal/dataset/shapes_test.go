package dataset

import (
	"testing"
	"time"
)

// TestEveryShapeReadsAndKnowsItsWords: a shape without words or a reading
// would panic in Ask or refuse every question.
func TestEveryShapeReadsAndKnowsItsWords(t *testing.T) {
	for _, s := range shapes {
		if s.words == nil || s.read == nil || s.match == nil || s.plan == nil && !s.live {
			t.Errorf("shape %q: words %v, read %v, match %v, plan %v", s.name, s.words != nil, s.read != nil, s.match != nil, s.plan != nil)
		}
	}
}

// TestOnePluralRule: has and unknown fold a plural the same way, "ies"
// included.
func TestOnePluralRule(t *testing.T) {
	q := parse("which parties lost the most battles and classes", time.Now())
	for _, w := range []string{"party", "battle", "class"} {
		if !q.has(w) {
			t.Errorf("has(%q) = false", w)
		}
	}
	if u := unknown(q, vocab("which lost most party battle class")); len(u) > 0 {
		t.Errorf("unknown leaves %v unread, though has reads them", u)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 16777216: "16,777,216", -1234567: "-1,234,567", -100: "-100"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
