package offline

// Abilities, rests and items given: "I cast sleep on the goblins", "we
// take a short rest", "give my potion to Mira"; and what an NPC with
// abilities does with them.

import (
	"fmt"
	"strings"

	"tavern/internal/agent"
	"tavern/internal/engine"
)

// abilityPhrases are the words that name each ability besides its name.
var abilityPhrases = map[string]wordList{
	engine.AbilitySecondWind:   {"second wind", "catch my breath", "catches his breath", "catches her breath", "rally"},
	engine.AbilityPowerAttack:  {"power attack", "mighty blow", "heavy blow", "with all my strength"},
	engine.AbilityShieldWall:   {"shield wall", "close ranks", "form a wall"},
	engine.AbilitySneakAttack:  {"sneak attack", "backstab", "stab in the back", "strike from the shadows"},
	engine.AbilityHide:         {"hide", "hides", "vanish", "melt into the shadows", "slip out of sight"},
	engine.AbilityDisarm:       {"disarm", "knock the weapon", "knock his weapon", "knock her weapon"},
	engine.AbilityFirebolt:     {"firebolt", "fire bolt", "fire at", "burn"},
	engine.AbilityMagicMissile: {"magic missile", "magic missiles", "missile", "missiles"},
	engine.AbilitySleep:        {"sleep", "put to sleep", "lull"},
	engine.AbilityShield:       {"shield spell", "cast shield", "ward myself", "ward"},
	engine.AbilityHealingWord:  {"healing word", "heal", "heals", "mend", "pray for"},
	engine.AbilityBless:        {"bless", "blessing"},
	engine.AbilityTurnUndead:   {"turn undead", "turn the undead", "holy symbol"},
	engine.AbilityRevive:       {"revive", "raise", "bring back", "wake", "get up"},
}

var (
	restWords      = wordList{"rest", "rests", "camp", "make camp", "sleep", "nap", "take a breather", "catch our breath"}
	longRestWords  = wordList{"long rest", "camp", "make camp", "for the night", "sleep", "overnight", "until morning", "till morning"}
	dropWords      = wordList{"drop", "drops", "discard", "throw away", "leave behind", "put down"}
	remedyToWords  = wordList{"give", "pour", "feed", "hand", "tip"}
	pluralFoeWords = wordList{"goblins", "them", "all", "everyone", "foes", "enemies"}
)

// abilityNamed is the actor's ability the words name (its phrase or its
// name), or nil.
func (t *offlineTurn) abilityNamed(text string) *engine.Ability {
	if t.Ctx.Actor == nil {
		return nil
	}
	var pick *engine.Ability
	best := 0
	for i := range t.Ctx.Actor.Abilities {
		a := &t.Ctx.Actor.Abilities[i]
		n := 0
		if hasWord(text, strings.ToLower(a.Name)) {
			n = 3 // the name itself: "magic missile" over "missile"
		}
		for _, p := range abilityPhrases[a.ID] {
			if hasWord(text, p) {
				n = max(n, 1+len(strings.Fields(p)))
			}
		}
		if n > best {
			pick, best = a, n
		}
	}
	return pick
}

// abilityAction answers a player's words that name one of their
// abilities, with use_ability on the target the words name.
func (t *offlineTurn) abilityAction(text string, words map[string]bool) (reply, bool) {
	a := t.abilityNamed(text)
	if a == nil {
		return reply{}, false
	}
	args := map[string]any{"ability": a.ID}
	switch a.Target {
	case engine.TargetEnemy:
		foes := t.foes()
		if len(foes) == 0 {
			return reply{}, false
		}
		target, best := "", 0
		for _, f := range foes {
			if s := score(words, f.Name, f.Entry); s > best {
				target, best = f.Entry, s
			}
		}
		if target == "" && !(a.ID == engine.AbilitySleep && pluralFoeWords.in(text)) {
			target = foes[0].Entry
		}
		if target != "" {
			args["target"] = target
		}
	case engine.TargetAlly:
		if target := t.allyNamed(words, a.ID == engine.AbilityRevive); target != "" {
			args["target"] = target
		}
	}
	return call("use_ability", args), true
}

// allyNamed is the entry of the party member the words name; failing a
// name, the fallen one (fallen) or the most hurt one, or "" (the actor).
func (t *offlineTurn) allyNamed(words map[string]bool, fallen bool) string {
	if t.Ctx.Combat == nil || words["myself"] || words["me"] {
		return ""
	}
	target, best := "", 0
	for _, c := range t.Ctx.Combat.Combatants {
		if s := score(words, c.Name); c.Side == engine.SideParty && s > best {
			target, best = c.Entry, s
		}
	}
	if target != "" {
		return target
	}
	worst := -1.0
	for _, c := range t.Ctx.Combat.Combatants {
		if c.Side != engine.SideParty || c.MaxHP == 0 || engine.HasStatus(c.Statuses, engine.StatusDead) || engine.HasStatus(c.Statuses, engine.StatusFled) {
			continue
		}
		if fallen && c.CanAct {
			continue
		}
		if hurt := 1 - float64(c.HP)/float64(c.MaxHP); hurt > worst && (fallen || hurt > 0) {
			target, worst = c.Entry, hurt
		}
	}
	return target
}

// remedyForAlly answers "give my potion to Mira" in a fight: the potion
// is poured into the ally the words name (use_item with a target), which
// brings a fallen friend round.
func (t *offlineTurn) remedyForAlly(text string, words map[string]bool) (reply, bool) {
	if !remedyToWords.in(text) || t.Ctx.Combat == nil {
		return reply{}, false
	}
	it := t.remedyNamed(words)
	if it == nil {
		return reply{}, false
	}
	me := ""
	if t.Ctx.Actor != nil {
		me = t.Ctx.Actor.Name
	}
	for _, c := range t.Ctx.Combat.Combatants {
		if c.Side == engine.SideParty && c.Name != me && score(words, c.Name) > 0 {
			return call("use_item", map[string]any{"item": it.ID, "target": c.Entry}), true
		}
	}
	return reply{}, false
}

// abilityNarration narrates what use_ability did.
func (t *offlineTurn) abilityNarration(l step) string {
	o := decodeStep[engine.AbilityOutcome](l)
	who := o.Actor
	switch o.AbilityID {
	case engine.AbilitySecondWind, engine.AbilityHealingWord, engine.AbilityRevive:
		if len(o.Heals) == 0 {
			break
		}
		h := o.Heals[0]
		verb := map[string]string{engine.AbilitySecondWind: "catches a second wind", engine.AbilityHealingWord: "speaks a healing word", engine.AbilityRevive: "calls a fallen friend back"}[o.AbilityID]
		return fmt.Sprintf("%s %s: %s recovers %d HP (%d/%d).", who, verb, h.Target, h.Amount, h.HP, h.MaxHP)
	case engine.AbilityPowerAttack, engine.AbilitySneakAttack, engine.AbilityFirebolt, engine.AbilityMagicMissile:
		if len(o.Hits) == 0 {
			break
		}
		h := o.Hits[0]
		lead := map[string]string{engine.AbilityPowerAttack: "puts everything into one blow", engine.AbilitySneakAttack: "strikes from a blind angle",
			engine.AbilityFirebolt: "hurls a mote of fire", engine.AbilityMagicMissile: "looses darts of force"}[o.AbilityID]
		var s string
		switch {
		case h.Result.Crit:
			s = fmt.Sprintf("%s %s: a perfect strike on %s for %d damage.", who, lead, h.Target, h.Result.Damage)
		case h.Result.Hit:
			s = fmt.Sprintf("%s %s: %s takes %d damage.", who, lead, h.Target, h.Result.Damage)
		default:
			s = fmt.Sprintf("%s %s, but %s evades it.", who, lead, h.Target)
		}
		return s + t.afterBlow(h)
	case engine.AbilitySleep:
		if len(o.Effects) == 0 {
			return who + " weaves a drowsy spell, but no foe succumbs."
		}
		return fmt.Sprintf("%s weaves a drowsy spell: %s %s to the ground, asleep.", who, fmtList(o.Effects), plural(len(o.Effects), "sinks", "sink"))
	case engine.AbilityHide:
		if o.Success {
			return who + " melts into the shadows."
		}
		return who + " tries to slip out of sight, but a foe keeps watching."
	case engine.AbilityDisarm:
		if o.Success {
			return fmt.Sprintf("%s knocks %s's weapon aside; its blows will falter.", who, o.Target)
		}
		return fmt.Sprintf("%s tries to disarm %s, who keeps hold.", who, o.Target)
	case engine.AbilityShield, engine.AbilityShieldWall:
		return fmt.Sprintf("%s raises a ward: %s %s harder to hit.", who, fmtList(o.Effects), plural(len(o.Effects), "is", "are"))
	case engine.AbilityBless:
		return fmt.Sprintf("%s calls down a blessing on %s.", who, fmtList(o.Effects))
	case engine.AbilityTurnUndead:
		if len(o.Effects) == 0 {
			return who + " raises a holy symbol; the dead do not falter."
		}
		return fmt.Sprintf("%s raises a holy symbol: %s cower%s.", who, fmtList(o.Effects), plural(len(o.Effects), "s", ""))
	}
	return fmt.Sprintf("%s uses %s: %s.", who, o.Ability, o.Summary)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// restIntent answers "we take a short rest" / "we camp for the night"
// with the rest tool, and narrates it.
func (t *offlineTurn) restIntent(text string) (reply, bool) {
	if done, ok := t.stepNamed("rest"); ok {
		if done.Err {
			return t.respond(strings.TrimPrefix(done.Result, "Error: "), t.hints()), true
		}
		r := decodeStep[engine.RestOutcome](done)
		var parts []string
		for _, h := range r.Healed {
			parts = append(parts, fmt.Sprintf("%s %d/%d", h.Target, h.HP, h.MaxHP))
		}
		s := "The party sits down for an hour, binds its cuts and catches its breath"
		if r.Kind == engine.RestLong {
			s = "The party makes camp and sleeps through the night"
		}
		s += fmt.Sprintf(" (%s).", fmtList(parts))
		if len(r.Restored) > 0 {
			s += " Ready again: " + fmtList(r.Restored) + "."
		}
		return t.respond(s, t.hints()), true
	}
	if !restWords.in(text) {
		return reply{}, false
	}
	if moveWords.in(text) && t.matchExit(tokens(text)) != nil {
		// "we go back to the camp": a place to go, not a rest.
		return reply{}, false
	}
	kind := engine.RestShort
	if longRestWords.in(text) && !hasWord(text, "short") {
		kind = engine.RestLong
	}
	return call("rest", map[string]any{"kind": kind}), true
}

// dropIntent answers "drop the rope" with drop_item.
func (t *offlineTurn) dropIntent(text string, words map[string]bool) (reply, bool) {
	if done, ok := t.stepNamed("drop_item"); ok {
		if done.Err {
			return t.respond(strings.TrimPrefix(done.Result, "Error: "), t.hints()), true
		}
		r := decodeStep[struct{ Dropped, By string }](done)
		return t.respond(fmt.Sprintf("%s sets down the %s.", r.By, strings.ToLower(r.Dropped)), t.hints()), true
	}
	if !dropWords.in(text) {
		return reply{}, false
	}
	me := t.me()
	if me == nil {
		return reply{}, false
	}
	pick := carried(me, words)
	if pick == "" {
		return t.respond(t.actorName()+" carries nothing like that to drop.", t.hints()), true
	}
	return call("drop_item", map[string]any{"item": pick}), true
}

// giveToFriend answers "give my potion to Mira" out of a fight: the item
// changes hands within the party.
func (t *offlineTurn) giveToFriend(text string, words map[string]bool) (reply, bool) {
	if done, ok := t.stepNamed("give_item"); ok && t.friendNamed(words) != nil {
		if done.Err {
			return t.respond(strings.TrimPrefix(done.Result, "Error: "), t.hints()), true
		}
		r := decodeStep[struct{ Given, To string }](done)
		return t.respond(fmt.Sprintf("%s hands the %s to %s.", t.actorName(), strings.ToLower(r.Given), t.friendNamed(words).Name), t.hints()), true
	}
	if !giveWords.in(text) {
		return reply{}, false
	}
	f := t.friendNamed(words)
	me := t.me()
	if f == nil || me == nil {
		return reply{}, false
	}
	pick := carried(me, words)
	if pick == "" {
		return t.respond(fmt.Sprintf("%s carries nothing like that to give %s.", t.actorName(), f.Name), t.hints()), true
	}
	return call("give_item", map[string]any{"item": pick, "to": f.ID}), true
}

// friendNamed is the other party member the words name, or nil.
func (t *offlineTurn) friendNamed(words map[string]bool) *agent.PartyMember {
	for i := range t.Ctx.Party {
		p := &t.Ctx.Party[i]
		if (t.Ctx.Actor == nil || p.ID != t.Ctx.Actor.ID) && score(words, p.Name) > 0 {
			return p
		}
	}
	return nil
}

// npcAbility picks an ability for an NPC's turn, by its profile: a heal
// when it or an ally is badly hurt (only those when heals), sleep on a
// crowd, a buff in the first round, otherwise a strike at target. ok is
// false when none fits (or none is ready).
func (t *offlineTurn) npcAbility(target agent.CombatantView, heals bool) (reply, bool) {
	p := t.Ctx.NPC
	for _, a := range p.Abilities {
		if a.Uses == 0 || heals != (a.ID == engine.AbilitySecondWind || a.ID == engine.AbilityHealingWord) {
			continue
		}
		switch a.ID {
		case engine.AbilitySecondWind:
			if p.HP*2 < p.MaxHP {
				return call("use_ability", map[string]any{"ability": a.ID}), true
			}
		case engine.AbilityHealingWord:
			for _, c := range t.Ctx.Combat.Combatants {
				if c.Side == engine.SideFoes && c.CanAct && c.HP*2 < c.MaxHP {
					return call("use_ability", map[string]any{"ability": a.ID, "target": c.Entry}), true
				}
			}
		case engine.AbilitySleep:
			if len(t.foes()) >= 2 {
				return call("use_ability", map[string]any{"ability": a.ID, "target": target.Entry}), true
			}
		case engine.AbilityPowerAttack, engine.AbilityFirebolt, engine.AbilityMagicMissile, engine.AbilityDisarm, engine.AbilitySneakAttack:
			return call("use_ability", map[string]any{"ability": a.ID, "target": target.Entry}), true
		case engine.AbilityShield, engine.AbilityHide, engine.AbilityBless, engine.AbilityShieldWall:
			if t.Ctx.Combat.Round == 1 {
				return call("use_ability", map[string]any{"ability": a.ID}), true
			}
		}
	}
	return reply{}, false
}
