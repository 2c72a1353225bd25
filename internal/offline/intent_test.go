package offline

import (
	"regexp"
	"strings"
	"testing"
)

// wordListRegexps are the regular expressions the word lists replaced, as
// they were: each list must match exactly the texts its expression did.
var wordListRegexps = []struct {
	name string
	list wordList
	re   string
}{
	{"attack", attackWords, `\b(attack|attacks|fight|kill|strike|hit|charge|ambush|stab|slash|shoot|punch|swing|smite|cut|draw my|draw our)\b`},
	{"flee", fleeWords, `\b(flee|run away|escape|retreat|withdraw)\b`},
	{"defend", defendWords, `\b(defend|block|parry|guard|shield|brace|dodge)\b`},
	{"move", moveWords, `\b(go|goes|walk|head|enter|travel|leave|return|follow|climb|cross|move|visit|proceed|back to)\b`},
	{"take", takeWords, `\b(take|pick up|picks up|grab|pocket|collect|loot)\b`},
	{"talk", talkWords, `\b(talk|speak|ask|greet|chat|say|tell|hail|question|bargain|haggle|buy)\b`},
	{"look", lookWords, `\b(look|search|examine|inspect|explore|observe|where|survey|around)\b`},
	{"inventory", invWords, `\b(inventory|my gear|my items|my pack|backpack|check myself|my wounds|status)\b`},
	{"quest", questWords, `\b(quest|job|work|help|lantern|goblin|goblins|task|reward|trouble|rumou?r|news)\b`},
	{"trade", tradeWords, `\b(buy|sell|trade|wares|price|potion|shop)\b`},
	{"follow", followWords, `\b(follow|come with|join (us|me)|accompany|travel with)\b`},
	{"buy", buyWords, `\b(buy|purchase)\b`},
	{"give", giveWords, `\b(give|deliver|hand|return|bring)\b`},
	{"accept", acceptWords, `\b(accept|we'll do it|i'll do it|take (the|your) (job|quest|task))\b`},
	{"explore", exploreWords, `\b(explore|discover|venture into|delve into)\b`},
	{"threaten", threatenWords, `\b(threaten|threatens|intimidate|menace|bully)\b`},
	{"equip", equipWords, `\b(equip|wield|wear|don|draw)\b`},
	{"quaff", quaffWords, `\b(drink|drinks|quaff|sip)\b`},
	{"drink", drinkWords, `\b(drink|drinks|quaff|sip|use|apply|bandage)\b`},
	{"eat", eatWords, `\b(eat|eats|munch|chew|nibble)\b`},
	{"light", lightWords, `\b(light|lights|kindle|ignite)\b`},
	{"wear", wearWords, `\b(wear|don)\b`},
	{"loot", lootWords, `\b(loot|search (the |their |his |her )?(body|bodies|corpse|corpses|remains|dead|fallen))\b`},
	{"use", useWords, `\b(drink|drinks|quaff|potion|bandage|use|uses)\b`},
	{"heal", healWords, `\b(heal|heals|pray|prays|tend|tends|mend)\b`},
	{"about", aboutWords, `\b(about|regarding|concerning)\b`},
}

// wordListTexts are texts to match: every entry of every list alone, glued
// to letters, digits, underscores, punctuation and other entries, and
// sentences players type.
func wordListTexts() []string {
	texts := []string{"", " ", "i attack!", "i look around", "go to the old mill", "overrun", "rumours of goblins",
		"i'll do it.", "we'll do it", "take the job", "take your quest", "search the bodies", "search  the body",
		"searchthe body", "draw  my sword", "draw my", "join us, friend", "héros attack", "attaque", "x_attack",
		"attack_x", "2attack", "attack2", "i ask maren about the goblins and the lantern", "back to the square",
		"i strike at the nearest goblin", "\"hello\" i say", "pick up the sword", "pickup", "head-on", "don't",
		"i'd like to buy a potion", "\xffattack\xff", "go\u00e9", "\u00e9go"}
	var entries []string
	for _, l := range wordListRegexps {
		entries = append(entries, l.list...)
	}
	for _, e := range entries {
		texts = append(texts, e)
		for _, glue := range []string{"a", "z", "0", "_", " ", ".", "'", "-", "é"} {
			texts = append(texts, glue+e, e+glue, glue+e+glue, "we "+e+glue+e)
		}
		half := e[:len(e)/2]
		texts = append(texts, half, e[1:], e[:len(e)-1], strings.ToUpper(e))
	}
	return texts
}

func TestWordListsMatchTheirRegexps(t *testing.T) {
	texts := wordListTexts()
	for _, l := range wordListRegexps {
		re := regexp.MustCompile(l.re)
		t.Run(l.name, func(t *testing.T) {
			for _, text := range texts {
				if got, want := l.list.in(text), re.MatchString(text); got != want {
					t.Errorf("in(%q) = %v, want %v (the regexp's)", text, got, want)
				}
			}
		})
	}
}

func FuzzWordLists(f *testing.F) {
	for _, text := range wordListTexts() {
		f.Add(text)
	}
	res := make([]*regexp.Regexp, len(wordListRegexps))
	for i, l := range wordListRegexps {
		res[i] = regexp.MustCompile(l.re)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for i, l := range wordListRegexps {
			if got, want := l.list.in(text), res[i].MatchString(text); got != want {
				t.Errorf("%s.in(%q) = %v, want %v (the regexp's)", l.name, text, got, want)
			}
		}
	})
}

// scoreBefore is score as it was, over each name's set of tokens.
func scoreBefore(words map[string]bool, names ...string) int {
	n := 0
	for _, name := range names {
		for w := range tokens(name) {
			if words[w] {
				n++
			}
		}
	}
	return n
}

func TestScoreIsScoreBefore(t *testing.T) {
	words := tokens("I attack the goblin brute, the goblin! then go to the old mill with Maren and a b c d e f g h i j")
	for _, names := range [][]string{{}, {""}, {"Goblin Brute", "goblin", "goblin-brute"}, {"Goblin goblin GOBLIN"},
		{"The Old Mill", "Old Mill", "old-mill"}, {"a b c d e f g h i j k l goblin goblin mill"}, {"Maren the Innkeeper", "maren"},
		{"bb cc dd ee ff gg hh ii jj kk goblin goblin brute brute"}, {"Kelvin \u212a sign, İstanbul"}} {
		if got, want := score(words, names...), scoreBefore(words, names...); got != want {
			t.Errorf("score(%q) = %d, want %d", names, got, want)
		}
	}
}
