package offline

// Reading intent: what the player's words ask for, and which of the
// narrator's plans answers it. Each plan is small: given the tool results
// of the turn so far, the next call.

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"tavern/internal/agent"
	"tavern/internal/engine"
)

var (
	attackWords = wordList{"attack", "attacks", "fight", "kill", "strike", "hit", "charge", "ambush", "stab", "slash", "shoot", "punch", "swing", "smite", "cut", "draw my", "draw our"}
	fleeWords   = wordList{"flee", "run away", "escape", "retreat", "withdraw"}
	defendWords = wordList{"defend", "block", "parry", "guard", "shield", "brace", "dodge"}
	moveWords   = wordList{"go", "goes", "walk", "head", "enter", "travel", "leave", "return", "follow", "climb", "cross", "move", "visit", "proceed", "back to"}
	takeWords   = wordList{"take", "pick up", "picks up", "grab", "pocket", "collect", "loot"}
	talkWords   = wordList{"talk", "speak", "ask", "greet", "chat", "say", "tell", "hail", "question", "bargain", "haggle", "buy"}
	lookWords   = wordList{"look", "search", "examine", "inspect", "explore", "observe", "where", "survey", "around"}
	invWords    = wordList{"inventory", "my gear", "my items", "my pack", "backpack", "check myself", "my wounds", "status"}
	questWords  = wordList{"quest", "job", "work", "help", "lantern", "goblin", "goblins", "task", "reward", "trouble", "rumor", "rumour", "news"}
	tradeWords  = wordList{"buy", "sell", "trade", "wares", "price", "potion", "shop"}
)

var (
	followWords   = wordList{"follow", "come with", "join us", "join me", "accompany", "travel with"}
	buyWords      = wordList{"buy", "purchase"}
	sellWords     = wordList{"sell", "sells", "pawn"}
	giveWords     = wordList{"give", "deliver", "hand", "return", "bring"}
	acceptWords   = append(wordList{"accept", "we'll do it", "i'll do it"}, joinEach([]string{"take the ", "take your "}, "job", "quest", "task")...)
	exploreWords  = wordList{"explore", "discover", "venture into", "delve into"}
	reExplore     = regexp.MustCompile(`\b(explore|discover|venture into|delve into)\s+(?:the\s+|a\s+|an\s+)?(.+)$`)
	threatenWords = wordList{"threaten", "threatens", "intimidate", "menace", "bully"}
	equipWords    = wordList{"equip", "wield", "wear", "don", "draw"}
	quaffWords    = wordList{"drink", "drinks", "quaff", "sip"}
	drinkWords    = wordList{"drink", "drinks", "quaff", "sip", "use", "apply", "bandage"}
	eatWords      = wordList{"eat", "eats", "munch", "chew", "nibble"}
	lightWords    = wordList{"light", "lights", "kindle", "ignite"}
	wearWords     = wordList{"wear", "don"}
	lootWords     = append(wordList{"loot"}, joinEach(joinEach([]string{"search "}, "", "the ", "their ", "his ", "her "),
		"body", "bodies", "corpse", "corpses", "remains", "dead", "fallen")...)
	// lightables are the words of item names that can be lit, sorted.
	lightables = []string{"candle", "lantern", "torch"}
	// garments are the words of item names worn without a rule (over
	// armour), sorted.
	garments = []string{"amulet", "boots", "cape", "cloak", "gloves", "hat", "hood", "mantle", "ring", "scarf"}
)

// wordList is a list of words and phrases to find in a player's words, as
// whole words: in is what the regular expression `\b(w1|w2|…)\b` matched
// (the one it replaces; TestWordListsMatchTheirRegexps), without its
// backtracking, which cost more than the rest of the narrator's reading
// of a turn. Every entry starts and ends with a letter.
type wordList []string

// in reports whether text has one of the list's entries as whole words.
func (l wordList) in(text string) bool {
	for _, w := range l {
		if hasWord(text, w) {
			return true
		}
	}
	return false
}

// hasWord reports whether w occurs in text between word boundaries (\b:
// the byte before and after is not an ASCII letter, digit or underscore).
func hasWord(text, w string) bool {
	for from := 0; ; {
		i := strings.Index(text[from:], w)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(w)
		if (start == 0 || !isWordByte(text[start-1])) && (end == len(text) || !isWordByte(text[end])) {
			return true
		}
		from = start + 1
	}
}

func isWordByte(b byte) bool {
	return b == '_' || ('0' <= b && b <= '9') || ('a' <= b && b <= 'z') || ('A' <= b && b <= 'Z')
}

// joinEach returns each prefix followed by each word, for lists whose
// phrases vary in two places.
func joinEach(prefixes []string, words ...string) wordList {
	var out wordList
	for _, p := range prefixes {
		for _, w := range words {
			out = append(out, p+w)
		}
	}
	return out
}

var stopwords = map[string]bool{"the": true, "and": true, "to": true, "a": true, "an": true, "of": true, "at": true,
	"with": true, "my": true, "his": true, "her": true, "into": true, "in": true, "on": true, "i": true, "we": true,
	"our": true, "back": true, "path": true, "way": true, "for": true, "from": true}

// tokens returns the words of s that say something: its runs of ASCII
// letters and digits, lower-cased, but for stopwords and single letters.
// (A scan, not a regular expression: it runs for every name the player's
// words are matched against.)
func tokens(s string) map[string]bool {
	out := map[string]bool{}
	for w := range strings.FieldsFuncSeq(strings.ToLower(s), notWordByte) {
		if !stopwords[w] && len(w) > 1 {
			out[w] = true
		}
	}
	return out
}

func notWordByte(r rune) bool { return (r < 'a' || r > 'z') && (r < '0' || r > '9') }

// score counts the words of the player's text found in any of names:
// each of a name's tokens (see tokens) once. It runs for every NPC, exit
// and item the words are matched against, so it walks each name's words
// rather than making their set.
// bestNamed is the x of xs whose name the words name best, false if the
// words name none.
func bestNamed[T any](words map[string]bool, xs []T, name func(T) string) (T, bool) {
	var pick T
	best := 0
	for _, x := range xs {
		if s := score(words, name(x)); s > best {
			pick, best = x, s
		}
	}
	return pick, best > 0
}

// carried is the id of the item p carries that the words name best, ""
// if they name none.
func carried(p *agent.PartyMember, words map[string]bool) string {
	it, _ := bestNamed(words, p.Items, func(it agent.ItemRef) string { return it.Name })
	return it.ID
}

func score(words map[string]bool, names ...string) int {
	n := 0
	for _, name := range names {
		var room [8]string
		seen := room[:0]
		for w := range strings.FieldsFuncSeq(strings.ToLower(name), notWordByte) {
			if stopwords[w] || len(w) <= 1 || slices.Contains(seen, w) {
				continue
			}
			seen = append(seen, w)
			if words[w] {
				n++
			}
		}
	}
	return n
}

func (t *offlineTurn) narrative() reply {
	text := strings.ToLower(t.Words)
	words := tokens(text)
	if c, ok := t.worldIntent(text, words); ok {
		return c
	}
	if attackWords.in(text) {
		// Scenario 1: attacking sours the relationship, then the fight.
		if n := t.matchNPC(words, true); n != nil {
			if _, ok := t.stepNamed("update_relationship"); !ok {
				return call("update_relationship", map[string]any{"b": n.ID, "delta": -20})
			}
			return call("start_combat", map[string]any{"narration": t.combatOpening(n), "foes": []string{n.ID}})
		}
	}
	if l := t.last(); l != nil {
		return t.narrativeFollowUp(*l)
	}
	return t.firstStep(text, words)
}

// firstStep answers the plain intents (move, take, inventory, talk,
// look) with their one tool call, or narrates that nothing comes of it.
func (t *offlineTurn) firstStep(text string, words map[string]bool) reply {
	loc := t.Ctx.Location
	if loc == nil {
		loc = &agent.LocationView{}
	}
	switch {
	case attackWords.in(text):
		return t.respond(t.pick("nofoe", "There is nobody here to fight. ", "Your hand drops to your weapon, but no foe is in sight. ")+t.ambient(), t.hints())
	case moveWords.in(text):
		if e := t.matchExit(words); e != nil {
			return call("move_party", map[string]any{"to": e.To})
		}
		return t.respond(fmt.Sprintf("You look for that way but cannot find it. From %s you can take: %s.", loc.Name, t.exitList()), t.hints())
	case takeWords.in(text):
		if it := t.matchItem(words); it != nil {
			return call("pickup_item", map[string]any{"item": it.ID})
		}
		return t.respond("There is nothing like that lying here. "+t.itemsSentence(), t.hints())
	case invWords.in(text):
		return call("get_player_info", map[string]any{})
	case talkWords.in(text) || strings.Contains(t.Words, `"`):
		if n := t.matchNPC(words, false); n != nil {
			return call("get_npc_info", map[string]any{"npc": n.ID})
		}
		return t.respond("Your words fall into silence: nobody here answers. "+t.peopleSentence(), t.hints())
	case lookWords.in(text):
		return call("look", map[string]any{})
	}
	if n := t.matchNPC(words, false); n != nil && score(words, n.Name) > 0 {
		return call("get_npc_info", map[string]any{"npc": n.ID})
	}
	return t.respond(t.actorName()+" "+t.pick("generic",
		"takes a moment. Nothing in the world answers, yet.",
		"tries it; the moment passes without consequence.",
		"does so, and the day moves on around them.")+" "+t.ambient(), t.hints())
}

// worldIntent returns the next call of a world scenario, if the turn is
// one; text is the player's words lower-cased, words its tokens.
func (t *offlineTurn) worldIntent(text string, words map[string]bool) (reply, bool) {
	if t.Ctx.Kind == agent.TurnStart {
		return t.startSession(), true
	}
	for _, plan := range []func(string, map[string]bool) (reply, bool){t.dropIntent, t.giveToFriend} {
		if c, ok := plan(text, words); ok {
			return c, true
		}
	}
	if c, ok := t.restIntent(text); ok {
		return c, true
	}
	switch {
	case lootWords.in(text):
		return t.loot(), true
	case threatenWords.in(text):
		if n := t.matchNPC(words, false); n != nil {
			return t.threaten(n), true
		}
	case followWords.in(text):
		if n := t.matchNPC(words, false); n != nil {
			return t.follow(n), true
		}
	case sellWords.in(text):
		n := t.matchNPC(words, false)
		if n == nil {
			n = t.merchantHere()
		}
		if n != nil {
			return t.sell(n, words), true
		}
		return t.respond("Nobody here is buying; look for a shop. "+t.peopleSentence(), t.hints()), true
	case buyWords.in(text):
		if n := t.matchNPC(words, false); n != nil {
			return t.buy(n, words), true
		}
		if n := t.merchantHere(); n != nil {
			return t.buy(n, words), true
		}
		return t.respond("Nobody here is selling anything; look for a merchant's stall or cart. "+t.peopleSentence(), t.hints()), true
	case giveWords.in(text):
		if n := t.matchNPC(words, false); n != nil {
			return t.give(n, words), true
		}
	case acceptWords.in(text):
		return t.accept(), true
	case lightWords.in(text):
		if c, ok := t.light(words); ok {
			return c, true
		}
	case drinkWords.in(text), eatWords.in(text):
		if c, ok := t.drink(text, words); ok {
			return c, true
		}
	case equipWords.in(text):
		if c, ok := t.equip(words); ok {
			return c, true
		}
	}
	if !exploreWords.in(text) {
		// The word list first: the regular expression is the slow way to
		// learn that the words do not explore.
		return reply{}, false
	}
	if m := reExplore.FindStringSubmatch(text); m != nil && t.matchExit(tokens(m[2])) == nil {
		return t.explore(m[2]), true
	}
	return reply{}, false
}

func (t *offlineTurn) matchNPC(words map[string]bool, preferHostile bool) *agent.NPCBrief {
	loc := t.Ctx.Location
	if loc == nil {
		return nil
	}
	var best *agent.NPCBrief
	bestScore := 0
	for i := range loc.NPCs {
		n := &loc.NPCs[i]
		if engine.HasStatus(n.Statuses, engine.StatusDead) {
			continue
		}
		s := score(words, n.Name, n.Kind, n.ID) * 2
		if preferHostile && n.Hostile {
			s++
		}
		if s > bestScore {
			best, bestScore = n, s
		}
	}
	if best == nil && len(loc.NPCs) == 1 && !engine.HasStatus(loc.NPCs[0].Statuses, engine.StatusDead) {
		best = &loc.NPCs[0]
	}
	return best
}

func (t *offlineTurn) matchExit(words map[string]bool) *agent.ExitView {
	loc := t.Ctx.Location
	if loc == nil {
		return nil
	}
	var best *agent.ExitView
	bestScore := 0
	for i := range loc.Exits {
		e := &loc.Exits[i]
		if s := score(words, e.Name, e.Dest, e.To); s > bestScore {
			best, bestScore = e, s
		}
	}
	return best
}

func (t *offlineTurn) matchItem(words map[string]bool) *agent.ItemRef {
	loc := t.Ctx.Location
	if loc == nil {
		return nil
	}
	var best *agent.ItemRef
	bestScore := 0
	for i := range loc.Items {
		it := &loc.Items[i]
		if s := score(words, it.Name, it.ID); s > bestScore {
			best, bestScore = it, s
		}
	}
	if best == nil && len(loc.Items) == 1 && (words["it"] || words["everything"] || words["all"]) {
		best = &loc.Items[0]
	}
	return best
}

// drink: a potion, a bandage or food used outside a fight heals
// (use_item). "drink"/"quaff" reach for a potion; "use X" and "eat X"
// need X to name it; "use the torch" lights it.
func (t *offlineTurn) drink(text string, words map[string]bool) (reply, bool) {
	if used, ok := t.stepNamed("use_item"); ok {
		if used.Err {
			return t.respond(strings.TrimPrefix(used.Result, "Error: "), t.hints()), true
		}
		if eatWords.in(text) {
			return t.respond(t.meal(used), t.hints()), true
		}
		return t.respond(t.remedy(used), t.hints()), true
	}
	it := t.remedyNamed(words)
	if it == nil || (score(words, it.Name) == 0 && !quaffWords.in(text)) {
		return reply{}, false
	}
	if lightable(it.Name) {
		return t.light(words)
	}
	return call("use_item", map[string]any{"item": it.ID}), true
}

// meal narrates food eaten with use_item (a remedy by the rules).
func (t *offlineTurn) meal(l step) string {
	r := decodeStep[struct {
		By     string             `json:"by"`
		Healed engine.HealOutcome `json:"healed"`
	}](l)
	food := "the food"
	if it := t.carried(l.arg("item")); it != nil {
		food = "the " + strings.TrimPrefix(strings.ToLower(it.Name), "the ")
	}
	return fmt.Sprintf("%s %s %s and recovers %d HP (%d/%d).", r.By, t.pick("eat", "sits down to", "wolfs down", "makes short work of"), food, r.Healed.Amount, r.Healed.HP, r.Healed.MaxHP)
}

// carried is the acting character's item with the instance id a tool
// call named (id is a step's argument).
func (t *offlineTurn) carried(id any) *agent.ItemRef {
	me := t.me()
	if me == nil || id == nil {
		return nil
	}
	for i := range me.Items {
		if me.Items[i].ID == id {
			return &me.Items[i]
		}
	}
	return nil
}

func lightable(name string) bool { return isA(name, lightables) }

// isA reports whether an item's name has one of kinds as a word.
func isA(name string, kinds []string) bool {
	words := tokens(name)
	return slices.ContainsFunc(kinds, func(w string) bool { return words[w] })
}

// light: a torch (lantern, candle) the character carries is lit. Light
// has no rule, so it is narrated only; words that name nothing to light
// ("light the fire") are not this plan's.
func (t *offlineTurn) light(words map[string]bool) (reply, bool) {
	me := t.me()
	if me == nil {
		return reply{}, false
	}
	var pick *agent.ItemRef
	best := 0
	for i := range me.Items {
		if it := &me.Items[i]; lightable(it.Name) {
			if s := score(words, it.Name); s > best {
				pick, best = it, s
			}
		}
	}
	if pick == nil {
		for _, w := range lightables {
			if words[w] {
				return t.respond(fmt.Sprintf("%s carries no %s to light.", t.actorName(), w), t.hints()), true
			}
		}
		return reply{}, false
	}
	name := "the " + strings.TrimPrefix(strings.ToLower(pick.Name), "the ")
	return t.respond(fmt.Sprintf("%s strikes flint on steel; %s %s, and shadows draw back to the edge of a ring of wavering light.",
		t.actorName(), name, t.pick("light", "catches with a hiss", "flares and settles to a steady flame")), t.hints()), true
}

// equip: wield or wear an item the words name (equip_item). A garment
// the rules do not equip (a cape, a hat) is put on, in words only.
func (t *offlineTurn) equip(words map[string]bool) (reply, bool) {
	if done, ok := t.stepNamed("equip_item"); ok {
		if done.Err {
			if it := t.carried(done.arg("item")); it != nil && wearWords.in(strings.ToLower(t.Words)) && isA(it.Name, garments) {
				return t.respond(fmt.Sprintf("%s puts on the %s. It turns no blade, but keeps off the wind and the rain.", t.actorName(), strings.ToLower(it.Name)), t.hints()), true
			}
			return t.respond(strings.TrimPrefix(done.Result, "Error: "), t.hints()), true
		}
		r := decodeStep[struct{ Equipped, By, Slot string }](done)
		if r.Slot == "armour" {
			return t.respond(fmt.Sprintf("%s now wears %s.", r.By, r.Equipped), t.hints()), true
		}
		return t.respond(fmt.Sprintf("%s now carries %s ready to hand.", r.By, r.Equipped), t.hints()), true
	}
	me := t.me()
	if me == nil {
		return reply{}, false
	}
	pick := carried(me, words)
	if pick == "" {
		return reply{}, false
	}
	return call("equip_item", map[string]any{"item": pick}), true
}

// merchantHere is a merchant at the party's location, for "buy a potion"
// without a name.
func (t *offlineTurn) merchantHere() *agent.NPCBrief {
	if t.Ctx.Location == nil {
		return nil
	}
	for i := range t.Ctx.Location.NPCs {
		if n := &t.Ctx.Location.NPCs[i]; n.Kind == "merchant" && !n.Hostile {
			return n
		}
	}
	return nil
}
