package agent

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// extractiveBefore is extractive as it was (three maps, strings.FieldsFunc,
// sort.Slice): extractive must give the same title, summary and words.
func extractiveBefore(transcript string, first, last int) (string, string, []string) {
	lines := strings.Split(transcript, "\n")
	untitled := fmt.Sprintf("Turns %d-%d", first, last)
	title := untitled
	var sentences []string
	count := map[string]int{}
	firstSeen := map[string]int{}
	for _, l := range lines {
		if strings.HasPrefix(l, "DM: ") {
			s := strings.TrimPrefix(l, "DM: ")
			if i := strings.IndexAny(s, ".!?"); i > 0 {
				s = s[:i+1]
			}
			sentences = append(sentences, s)
		} else if !strings.HasPrefix(l, "[") && title == untitled && l != "" {
			title = abbrev(l, 70)
		}
		if strings.HasPrefix(l, "[") {
			continue
		}
		for _, w := range strings.FieldsFunc(l, func(r rune) bool { return !unicode.IsLetter(r) && r != '-' && r != '\'' }) {
			lw := strings.ToLower(strings.Trim(w, "-'"))
			if utf8.RuneCountInString(lw) < 4 || memoryStopwords[lw] {
				continue
			}
			if _, ok := firstSeen[lw]; !ok {
				firstSeen[lw] = len(firstSeen)
			}
			count[lw]++
			if r, _ := utf8.DecodeRuneInString(w); unicode.IsUpper(r) {
				count[lw]++
			}
		}
	}
	summary := abbrev(strings.Join(sentences, " "), 600)
	if summary == "" {
		summary = "Nothing was narrated."
	}
	type seen struct {
		word         string
		count, first int
	}
	ranked := make([]seen, 0, len(count))
	for w, n := range count {
		ranked = append(ranked, seen{w, n, firstSeen[w]})
	}
	sort.Slice(ranked, func(i, j int) bool {
		if ranked[i].count != ranked[j].count {
			return ranked[i].count > ranked[j].count
		}
		return ranked[i].first < ranked[j].first
	})
	words := make([]string, 0, min(8, len(ranked)))
	for _, r := range ranked[:cap(words)] {
		words = append(words, r.word)
	}
	return title, summary, words
}

var memoryScanInputs = []string{"", "\n", "Turn 1. Aldric (seat 1) acts.", "Turn 12. x\nmore", "Turn . x", "Turn 1.x", "Turn x. y",
	"turn 1. x", " Turn 1. x", "Turn 123456. ", "Turn 1. \xff\xfe bad\nnext", "Turn 1. a\r\nb", "Turn ١. arabic digit",
	"Aldric \"I attack Snikket!\"\nDM: Steel rings. Snikket falls! More.\n[attack {\"target\":\"snikket\"}]\nDM: The goblin-king's men flee? Yes.",
	"Brina Brina brina BRINA Crooked Lantern lantern Lantern Maren maren-'s 'tis -goblins- Goblins goblins Élodie élodie ÉLODIE",
	"DM: .Nothing\nDM: \n[x]\nHero1 \"go\"\nDM: Wolves, wolves; WOLVES! Ravens ravens Owls owls Bats bats Rats rats Cats cats Dogs dogs Foxes foxes",
}

func TestExtractiveIsExtractiveBefore(t *testing.T) {
	for _, in := range memoryScanInputs {
		checkExtractive(t, in)
	}
}

func TestTurnHeadIsItsRegexp(t *testing.T) {
	re := regexp.MustCompile(`^Turn \d+\. ([^\n]*)`)
	for _, in := range memoryScanInputs {
		checkTurnHead(t, re, in)
	}
}

func FuzzMemoryScans(f *testing.F) {
	for _, in := range memoryScanInputs {
		f.Add(in)
	}
	re := regexp.MustCompile(`^Turn \d+\. ([^\n]*)`)
	f.Fuzz(func(t *testing.T, in string) {
		checkExtractive(t, in)
		checkTurnHead(t, re, in)
	})
}

func checkExtractive(t *testing.T, in string) {
	t.Helper()
	title, summary, words := extractive(in, 3, 9)
	wantTitle, wantSummary, wantWords := extractiveBefore(in, 3, 9)
	if title != wantTitle || summary != wantSummary || !slices.Equal(words, wantWords) {
		t.Errorf("extractive(%q) = %q, %q, %q; want %q, %q, %q", in, title, summary, words, wantTitle, wantSummary, wantWords)
	}
}

func checkTurnHead(t *testing.T, re *regexp.Regexp, in string) {
	t.Helper()
	got, ok := turnHead(in)
	m := re.FindStringSubmatch(in)
	if ok != (m != nil) || ok && got != m[1] {
		t.Errorf("turnHead(%q) = %q, %v; want %q (the regexp's)", in, got, ok, m)
	}
}
