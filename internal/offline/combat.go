package offline

// Combat: a player's action in a fight, the foes' answer in narrative
// combat, the narration of each action, the round's bookend and the end.

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"tavern/internal/agent"
	"tavern/internal/engine"
)

func (t *offlineTurn) combat() reply {
	cb := t.Ctx.Combat
	if cb == nil {
		return call("end_combat", map[string]any{"narration": "The dust settles.", "outcome": engine.OutcomeForcedEnd})
	}
	switch t.Ctx.Kind {
	case agent.TurnResolution:
		return call("end_combat", map[string]any{"narration": t.ending(cb.Ending), "outcome": cb.Ending})
	case agent.TurnBookend:
		return call("continue_combat", map[string]any{"narration": t.bookend()})
	}
	if len(t.Steps) == 0 {
		if t.Ctx.Kind == agent.TurnNPC {
			return t.npcAction()
		}
		return t.pcAction()
	}
	if first := t.Steps[0]; first.Err && len(t.Steps) == 1 {
		// The chosen action was refused: fall back on the simplest valid
		// one, attacking the first foe standing (the narration says why).
		if f := t.foes(); len(f) > 0 {
			return call("attack", map[string]any{"target": f[0].Entry})
		}
	}
	if t.Ctx.Kind == agent.TurnPlayer && t.Ctx.CombatMode == engine.CombatNarrative {
		// Narrative combat has no queue: the foes answer in the same beat.
		if c, ok := t.foeReaction(); ok {
			return c
		}
	}
	var parts []string
	for _, s := range t.Steps {
		switch {
		case !s.Err:
			parts = append(parts, t.combatNarration(s))
		case s.Name == "use_ability" || s.Name == "use_item":
			// A refused ability or item says why, and what is ready.
			parts = append(parts, strings.TrimPrefix(s.Result, "Error: "))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, t.combatNarration(t.Steps[len(t.Steps)-1]))
	}
	return call("continue_combat", map[string]any{"narration": strings.Join(parts, " ")})
}

var (
	useWords  = wordList{"drink", "drinks", "quaff", "potion", "bandage", "use", "uses"}
	healWords = wordList{"heal", "heals", "pray", "prays", "tend", "tends", "mend"}
)

func (t *offlineTurn) me() *agent.PartyMember {
	if t.Ctx.Actor == nil {
		return nil
	}
	for i := range t.Ctx.Party {
		if t.Ctx.Party[i].ID == t.Ctx.Actor.ID {
			return &t.Ctx.Party[i]
		}
	}
	return nil
}

// pcAction reads a player's words in a fight.
func (t *offlineTurn) pcAction() reply {
	text := strings.ToLower(t.Words)
	words := tokens(text)
	if c, ok := t.remedyForAlly(text, words); ok {
		return c
	}
	if c, ok := t.abilityAction(text, words); ok {
		return c
	}
	switch {
	case fleeWords.in(text):
		return call("attempt_flee", map[string]any{})
	case defendWords.in(text):
		return call("defend", map[string]any{})
	case healWords.in(text):
		return t.heal(words)
	case useWords.in(text):
		if it := t.remedyNamed(words); it != nil {
			return call("use_item", map[string]any{"item": it.ID})
		}
	}
	foes := t.foes()
	if len(foes) == 0 {
		return call("continue_combat", map[string]any{"narration": t.actorName() + " looks for a foe, but none still stands."})
	}
	target := foes[0]
	best := 0
	for _, f := range foes {
		if s := score(words, f.Name, f.Entry); s > best {
			target, best = f, s
		}
	}
	return call("attack", map[string]any{"target": target.Entry})
}

// heal heals the ally the words name (default: the healer) with first
// aid.
func (t *offlineTurn) heal(words map[string]bool) reply {
	target := ""
	best := 0
	for _, c := range t.Ctx.Combat.Combatants {
		if s := score(words, c.Name); c.Side == engine.SideParty && s > best {
			target, best = c.Entry, s
		}
	}
	if target == "" && t.Ctx.Actor != nil {
		target = string(engine.PCEntry(t.Ctx.Actor.Seat))
	}
	// First aid: a cleric's healing is an ability (healing_word), spent
	// from its uses; what remains is a bandage and a kind word.
	dice := "1d6"
	if t.Ctx.Ruleset == engine.RulesetD20 {
		dice = "1d4"
	}
	return call("heal", map[string]any{"target": target, "dice": dice})
}

// remedyNamed returns the acting character's item the words name, a
// potion first, or nil.
func (t *offlineTurn) remedyNamed(words map[string]bool) *agent.ItemRef {
	me := t.me()
	if me == nil {
		return nil
	}
	var pick *agent.ItemRef
	best := -1
	for i := range me.Items {
		it := &me.Items[i]
		s := 2 * score(words, it.Name)
		if strings.Contains(strings.ToLower(it.Name), "potion") {
			s++ // a potion is what most people reach for
		}
		if s > best && (s > 0) {
			pick, best = it, s
		}
	}
	return pick
}

// foeReaction makes the next foe that has not acted this beat attack the
// weakest PC standing (narrative combat). At most three foes answer.
func (t *offlineTurn) foeReaction() (reply, bool) {
	acted := map[string]bool{}
	for _, s := range t.Steps {
		if a, _ := s.arg("attacker").(string); a != "" {
			acted[a] = true
		}
	}
	if len(acted) >= 3 {
		return reply{}, false
	}
	var party []agent.CombatantView
	for _, c := range t.Ctx.Combat.Combatants {
		if c.Side == engine.SideParty && c.CanAct {
			party = append(party, c)
		}
	}
	if len(party) == 0 {
		return reply{}, false
	}
	sort.SliceStable(party, func(i, j int) bool { return party[i].HP < party[j].HP })
	for _, c := range t.Ctx.Combat.Combatants {
		if c.Side == engine.SideFoes && c.CanAct && !acted[c.Entry] && !t.downInThisTurn(c.Name) {
			return call("attack", map[string]any{"attacker": c.Entry, "target": party[0].Entry}), true
		}
	}
	return reply{}, false
}

// downInThisTurn reports whether an earlier step of this turn felled name.
func (t *offlineTurn) downInThisTurn(name string) bool {
	for _, s := range t.Steps {
		var o engine.AttackOutcome
		if s.Name == "attack" && !s.Err && json.Unmarshal([]byte(s.Result), &o) == nil && o.Target == name && o.Down != "" {
			return true
		}
	}
	return false
}

// foes returns the combatants standing against whoever acts.
func (t *offlineTurn) foes() []agent.CombatantView {
	mySide := engine.SideParty
	if t.Ctx.Kind == agent.TurnNPC {
		mySide = engine.SideFoes
		for _, c := range t.Ctx.Combat.Combatants {
			if t.Ctx.NPC != nil && c.Entry == string(engine.NPCEntry(t.Ctx.NPC.ID)) {
				mySide = c.Side
			}
		}
	}
	out := make([]agent.CombatantView, 0, len(t.Ctx.Combat.Combatants))
	for _, c := range t.Ctx.Combat.Combatants {
		if c.Side != mySide && c.CanAct {
			out = append(out, c)
		}
	}
	return out
}

func (t *offlineTurn) weaponOf(name string) string {
	for _, c := range t.Ctx.Combat.Combatants {
		if c.Name == name && c.Weapon != "" {
			return strings.ToLower(c.Weapon)
		}
	}
	return "weapon"
}

func (t *offlineTurn) rangedOf(name string) bool {
	for _, c := range t.Ctx.Combat.Combatants {
		if c.Name == name {
			return c.Ranged
		}
	}
	return false
}

func (t *offlineTurn) combatNarration(l step) string {
	if l.Err {
		return t.pick("hes", "The moment slips away in confusion.", "A feint, a stumble: nothing comes of it.")
	}
	switch l.Name {
	case "attack":
		o := decodeStep[engine.AttackOutcome](l)
		return t.blow(o) + t.afterBlow(o)
	case "use_item":
		return t.remedy(l)
	case "use_ability":
		return t.abilityNarration(l)
	case "heal":
		r := decodeStep[engine.HealOutcome](l)
		if t.npcWords(r.Target) {
			return fmt.Sprintf("%s %s: %s recovers (%s).", t.actorOrNPC(), t.pick("pray", "calls on the light", "murmurs a prayer", "works quickly"), r.Target, engine.HealthWord(r.HP, r.MaxHP))
		}
		return fmt.Sprintf("%s %s: %s recovers %d HP (%d/%d).", t.actorOrNPC(), t.pick("pray", "calls on the light", "murmurs a prayer", "works quickly"), r.Target, r.Amount, r.HP, r.MaxHP)
	case "defend":
		return t.actorOrNPC() + t.pick("def", " raises a guard and waits for the blow.", " sets their feet and watches for an opening.")
	case "attempt_flee":
		r := decodeStep[struct {
			Fled bool   `json:"fled"`
			Who  string `json:"who"`
		}](l)
		if r.Fled {
			return r.Who + t.pick("fled", " breaks away and escapes!", " bolts and is gone.")
		}
		return r.Who + " tries to break away, but is cut off."
	}
	return "The fight goes on."
}

// blow narrates an attack: a fumble, a critical, armour that holds, a hit
// (a shot for ranged weapons) or a miss.
func (t *offlineTurn) blow(o engine.AttackOutcome) string {
	w := t.weaponOf(o.Attacker)
	switch {
	case o.Result.Fumble:
		return fmt.Sprintf("%s swings wildly with the %s and stumbles, off balance.", o.Attacker, w)
	case o.Result.Crit:
		return fmt.Sprintf("A perfect strike! %s's %s tears into %s for %d damage.", o.Attacker, w, o.Target, o.Result.Damage)
	case o.Result.Hit && o.Result.Damage == 0:
		return fmt.Sprintf("%s lands a blow on %s, but the armour takes it all.", o.Attacker, o.Target)
	case o.Result.Hit && t.rangedOf(o.Attacker):
		return fmt.Sprintf("%s %s %s: the %s hits for %d damage.", o.Attacker, t.pick("shoot", "looses a shot at", "takes aim at", "fires at"), o.Target, w, o.Result.Damage)
	case o.Result.Hit:
		return fmt.Sprintf("%s %s %s with the %s for %d damage.", o.Attacker, t.pick("hitverb", "catches", "cuts", "batters", "strikes"), o.Target, w, o.Result.Damage)
	case t.rangedOf(o.Attacker):
		return fmt.Sprintf("%s's shot from the %s goes wide of %s.", o.Attacker, w, o.Target)
	}
	return fmt.Sprintf("%s %s; the %s finds only air.", o.Target, t.pick("dodge", "twists aside", "ducks", "sidesteps"), w)
}

// afterBlow says how the target fares: down, or its HP after a hit.
func (t *offlineTurn) afterBlow(o engine.AttackOutcome) string {
	switch o.Down {
	case engine.StatusDead:
		return " " + o.Target + t.pick("dead", " crumples and does not rise.", " falls, lifeless.")
	case engine.StatusUnconscious:
		return " " + o.Target + " collapses, senseless."
	}
	if o.Result.Hit {
		if t.npcWords(o.Target) {
			return fmt.Sprintf(" (%s: %s)", o.Target, engine.HealthWord(o.HP, o.MaxHP))
		}
		return fmt.Sprintf(" (%s: %d/%d HP)", o.Target, o.HP, o.MaxHP)
	}
	return ""
}

// npcWords reports whether name is an NPC whose numbers the players of
// this table may not see (agent.TurnContext.NPCHealth).
func (t *offlineTurn) npcWords(name string) bool {
	if t.Ctx.NPCHealth == "" || t.Ctx.Combat == nil {
		return t.Ctx.NPCHealth != "" && t.Ctx.NPC != nil && t.Ctx.NPC.Name == name
	}
	for _, c := range t.Ctx.Combat.Combatants {
		if c.Name == name && c.Kind == engine.KindNPC {
			return true
		}
	}
	return false
}

// remedy narrates use_item: a potion drunk, or an ally tended.
func (t *offlineTurn) remedy(l step) string {
	r := decodeStep[struct {
		Used   string             `json:"used"`
		By     string             `json:"by"`
		Healed engine.HealOutcome `json:"healed"`
	}](l)
	if r.Healed.Target == r.By {
		if t.npcWords(r.By) {
			return fmt.Sprintf("%s %s and looks %s.", r.By, t.pick("drink", "gulps down a remedy", "drinks deep"), engine.HealthWord(r.Healed.HP, r.Healed.MaxHP))
		}
		return fmt.Sprintf("%s %s and recovers %d HP (%d/%d).", r.By, t.pick("drink", "gulps down a remedy", "drinks deep"), r.Healed.Amount, r.Healed.HP, r.Healed.MaxHP)
	}
	if t.npcWords(r.Healed.Target) {
		return fmt.Sprintf("%s tends to %s (%s).", r.By, r.Healed.Target, engine.HealthWord(r.Healed.HP, r.Healed.MaxHP))
	}
	return fmt.Sprintf("%s tends to %s: +%d HP (%d/%d).", r.By, r.Healed.Target, r.Healed.Amount, r.Healed.HP, r.Healed.MaxHP)
}

func (t *offlineTurn) actorOrNPC() string {
	if t.Ctx.NPC != nil {
		return t.Ctx.NPC.Name
	}
	return t.actorName()
}

func (t *offlineTurn) bookend() string {
	cb := t.Ctx.Combat
	var foes, party []string
	for _, c := range cb.Combatants {
		if !c.CanAct {
			continue
		}
		s := fmt.Sprintf("%s %d/%d", c.Name, c.HP, c.MaxHP)
		if t.npcWords(c.Name) {
			s = fmt.Sprintf("%s (%s)", c.Name, engine.HealthWord(c.HP, c.MaxHP))
		}
		if c.Side == engine.SideFoes {
			foes = append(foes, s)
		} else {
			party = append(party, s)
		}
	}
	scene := t.pick("scene", "Smoke drifts across the yard.", "Boots slide in the mud.", "Somewhere a crow screams.", "Breath steams in the cold air.")
	if cb.Round == 1 {
		return fmt.Sprintf("Round 1 at %s. %s Facing you: %s.", locName(t), scene, fmtList(foes))
	}
	return fmt.Sprintf("Round %d. %s Still standing: %s against %s.", cb.Round, scene, fmtList(party), fmtList(foes))
}

func locName(t *offlineTurn) string {
	if t.Ctx.Location != nil {
		return t.Ctx.Location.Name
	}
	return "the battlefield"
}

func (t *offlineTurn) ending(outcome string) string {
	switch engine.Outcome(outcome) {
	case engine.OutcomePlayerWin:
		return t.pick("win", "The last foe falls. Silence returns, broken only by ragged breathing.", "It is over. You stand among the fallen, victorious.")
	case engine.OutcomeNPCFlee:
		return "Your remaining foes scatter into the shadows. The field is yours."
	case engine.OutcomePlayerFlee:
		return "You break away and run, the sounds of the fight fading behind you."
	case engine.OutcomePlayerDie:
		return "The last of you falls. Darkness takes the party..."
	}
	return "The fight ends."
}

func (t *offlineTurn) combatOpening(n *agent.NPCBrief) string {
	who := t.actorName()
	if n.Hostile {
		return fmt.Sprintf("%s %s %s. %s", who, t.pick("open", "draws steel and rushes", "lunges at", "charges"), n.Name,
			t.pick("cry", "Your foes scramble for their weapons!", "Steel rings; there is no turning back now.", "The air fills with war cries."))
	}
	return fmt.Sprintf("%s turns on %s without warning. %s", who, n.Name, t.pick("cry", "Shock gives way to fury.", "Whatever trust there was is gone."))
}
