package dataset

// Exact mapping (PROTOCOL.md "Operator, continued"): the analyst answers a
// question only with a shape that accounts for every word of it. A word
// no shape knows ("xp" in "top 5 players by XP" read as actions per
// player, "class" in "which class wins most fights" read as a number of
// wins) means the question is something else, so it is refused with what
// the analyst can answer rather than answered as another question.

import "strings"

// stopWords carry no meaning of their own in an operator's question.
var stopWords = words(`a an the of in on at by for to from with is are was were be been being do does did done
	have has had what which who whom whose how me show list give tell please there their they them it its and or
	per each all so far ever i we our my you can could would will get gets got this that these those than as about
	any some one ones kind sort see find want know number many much s t`)

// filterWords are read by parse as filters: time windows, rulesets, top N.
var filterWords = words(`today yesterday week month last past day days hour hours top d20 d100 ruleset rulesets
	time since over recent recently`)

// words splits a list of words into a set.
func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(s) {
		out[w] = true
	}
	return out
}

// forms are the word and the singulars it may be a plural of: the one
// plural rule, by which question.has and unknown both read a word.
func forms(w string) []string {
	out := []string{w}
	if strings.HasSuffix(w, "ies") && len(w) > 4 {
		out = append(out, w[:len(w)-3]+"y")
	}
	if strings.HasSuffix(w, "es") && len(w) > 3 {
		out = append(out, w[:len(w)-2])
	}
	if strings.HasSuffix(w, "s") && len(w) > 2 {
		out = append(out, w[:len(w)-1])
	}
	return out
}

// unknown returns the words of q that are neither stop words, filters,
// numbers nor in vocab: what a shape would leave unread.
func unknown(q question, vocab map[string]bool) []string {
	var out []string
next:
	for _, w := range q.words {
		if strings.Trim(w, "0123456789") == "" {
			continue // a number: top N, the last N days
		}
		for _, f := range forms(w) {
			if stopWords[f] || filterWords[f] || vocab[f] {
				continue next
			}
		}
		out = append(out, w)
	}
	return out
}

// vocab builds a shape's vocabulary from word lists and lists of words.
func vocab(lists ...any) map[string]bool {
	out := map[string]bool{}
	for _, l := range lists {
		switch l := l.(type) {
		case string:
			for w := range words(l) {
				out[w] = true
			}
		case []string:
			for _, s := range l {
				for w := range words(s) {
					out[w] = true
				}
			}
		}
	}
	return out
}

// refusal is the answer to a question no shape maps exactly: which words
// were not understood, and what can be asked.
func refusal(unread []string) string {
	s := "I did not answer: I could not map this question exactly onto one I know"
	if len(unread) > 0 {
		quoted := make([]string, len(unread))
		for i, w := range unread {
			quoted[i] = "“" + w + "”"
		}
		s += " (I do not know what " + join(quoted) + " means here)"
	}
	return s + ", and I never answer a different question instead. Without a language model I can answer these: " +
		strings.Join(examples(), "; ") + ". Ask one of those, or configure a model for anything else."
}
