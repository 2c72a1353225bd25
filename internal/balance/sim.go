// Package balance measures how winnable fights are: it plays seeded
// fights to their end with the offline narrator as the DM and bots
// speaking for the player characters (BotWords), as the hub drives the
// turn machine. Start with [Run]; cmd/balance prints its table.
package balance

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/offline"
)

// The simulation: one fight played to its end with the offline narrator
// as the DM, the turn machine as the hub drives it, and bots speaking for
// the player characters.

// Encounter is a fight the party meets: the adventure, the place, and
// the foe it opens on (as a player would: "I attack Snikket").
type Encounter struct {
	Adventure *engine.Adventure
	Location  string // the location's id
	Opener    string // the foe's name
}

func (e Encounter) String() string {
	return fmt.Sprintf("%s: %s", e.Adventure.Name, locationName(e.Adventure, e.Location))
}

func locationName(a *engine.Adventure, id string) string {
	for _, l := range a.Locations {
		if l.ID == id {
			return l.Name
		}
	}
	return id
}

// Encounters lists the built-in fights of an adventure: every location
// with hostile NPCs, opened on the strongest of them.
func Encounters(a *engine.Adventure) []Encounter {
	byLoc := map[string][]engine.NPC{}
	for _, n := range a.NPCs {
		if n.Hostile && !n.Hidden {
			byLoc[n.Location] = append(byLoc[n.Location], n)
		}
	}
	var out []Encounter
	for _, l := range a.Locations {
		foes := byLoc[l.ID]
		if len(foes) == 0 {
			continue
		}
		sort.SliceStable(foes, func(i, j int) bool { return foes[i].Level > foes[j].Level })
		out = append(out, Encounter{Adventure: a, Location: l.ID, Opener: foes[0].Name})
	}
	return out
}

// names are the characters' names by seat: short and unlike any foe's,
// so the narrator reads them in "heal Mira".
var names = []string{"Odo", "Mira", "Sel", "Tam"}

// Result is how one fight ended.
type Result struct {
	Won    bool
	Rounds int
	HPLeft float64 // the party's HP at the end, as a share of its max
}

// PlayFight plays one seeded fight of party (classes, by seat) against e
// under ruleset.
func PlayFight(cat *engine.Catalogue, e Encounter, ruleset string, party []string, seed uint64) (Result, error) {
	st := engine.NewState(engine.Config{Ruleset: ruleset, CombatMode: engine.CombatTactical}, e.Adventure, cat, seed)
	d := engine.NewDice(seed*7919 + uint64(len(party)))
	for i, class := range party {
		seat := fmt.Sprint(i + 1)
		if _, err := st.AddCharacter(d, "c"+seat, seat, "p"+seat, engine.NewCharacterSpec{Name: names[i], Class: class}); err != nil {
			return Result{}, err
		}
	}
	st.Game.Location = e.Location
	for _, c := range st.Party {
		c.Location = e.Location
	}
	r := &agent.Runner{Narrative: offline.Narrator{}, Combat: offline.Narrator{}}
	history := map[string][]agent.Message{}
	turn := 0
	play := func(kind string, actor *engine.Character, text string) error {
		turn++
		st.Game.Turn = turn
		tn := &agent.Turn{No: turn, Kind: kind, State: st, Dice: d, Actor: actor, Text: text}
		if cb := st.Game.Combat; cb != nil {
			tn.Entry = cb.Current()
		}
		// A short window of history: the narrator reads only this turn.
		h := history[tn.AgentName()]
		if len(h) > 40 {
			h = h[len(h)-40:]
		}
		tn.History = h
		res, err := r.Run(context.Background(), tn)
		if err != nil {
			return fmt.Errorf("turn %d (%s %q): %w", turn, kind, text, err)
		}
		history[tn.AgentName()] = append(h, res.Messages...)
		if st.Game.Combat != nil && res.Output.Tool != "start_combat" {
			st.AdvanceTurn(d)
		}
		return nil
	}
	if err := play(agent.TurnPlayer, st.Party[0], "I attack "+e.Opener+"!"); err != nil {
		return Result{}, err
	}
	if st.Game.Mode != engine.ModeCombat {
		return Result{}, fmt.Errorf("attacking %s did not start a fight", e.Opener)
	}
	var res Result
	for i := 0; st.Game.Mode == engine.ModeCombat; i++ {
		if i > 1000 {
			return Result{}, fmt.Errorf("the fight did not end in 1000 turns")
		}
		cb := st.Game.Combat
		res.Rounds = cb.Round
		cur := cb.Current()
		var err error
		switch {
		case cb.Ending != "":
			err = play(agent.TurnResolution, nil, "")
		case cur.Kind == engine.KindBookend:
			err = play(agent.TurnBookend, nil, "")
		case cur.Kind == engine.KindNPC:
			err = play(agent.TurnNPC, nil, "")
		default:
			c := st.Character(cur.Ref)
			err = play(agent.TurnPlayer, c, BotWords(st, c))
		}
		if err != nil {
			return Result{}, err
		}
	}
	out := st.Game.LastCombatResult.Outcome
	res.Won = out == engine.OutcomePlayerWin || out == engine.OutcomeNPCFlee
	var hp, maxHP int
	for _, c := range st.Party {
		hp += c.HP
		maxHP += c.MaxHP
	}
	res.HPLeft = float64(hp) / float64(maxHP)
	return res, nil
}

// BotWords is what a sensible player of c says on its turn: heal or
// revive who needs it, open with the party's buffs and area spells, spend
// the strong abilities while they last, then attack the weakest foe.
func BotWords(st *engine.State, c *engine.Character) string {
	cb := st.Game.Combat
	var foes []engine.Combatant
	var fallen, hurt *engine.Character
	for _, e := range cb.Order {
		switch e.Kind {
		case engine.KindNPC:
			if n := st.World.NPCs[e.Ref]; n != nil && n.Hostile && n.Standing() {
				foes = append(foes, e)
			}
		case engine.KindPC:
			p := st.Character(e.Ref)
			if p == nil || p == c || engine.HasStatus(p.Statuses, engine.StatusFled) {
				continue
			}
			if !p.Conscious() {
				fallen = p
			} else if p.HP*10 < p.MaxHP*4 && (hurt == nil || p.HP < hurt.HP) {
				hurt = p
			}
		}
	}
	if len(foes) == 0 {
		return "I look around"
	}
	weakest := slices.MinFunc(foes, func(a, b engine.Combatant) int { return st.World.NPCs[a.Ref].HP - st.World.NPCs[b.Ref].HP })
	ready := map[string]bool{}
	for _, a := range st.CharacterAbilities(c) {
		ready[a.ID] = a.Uses > 0
	}
	potion := slices.ContainsFunc(st.Inventory(c.ID), func(it *engine.Item) bool { return strings.Contains(strings.ToLower(it.Name), "potion") })
	switch {
	case fallen != nil && ready[engine.AbilityRevive]:
		return "I revive " + fallen.Name
	case fallen != nil && ready[engine.AbilityHealingWord]:
		return "healing word on " + fallen.Name
	case fallen != nil && potion:
		return "I give my potion to " + fallen.Name
	case hurt != nil && ready[engine.AbilityHealingWord]:
		return "I heal " + hurt.Name
	case c.HP*10 < c.MaxHP*4 && ready[engine.AbilitySecondWind]:
		return "I catch my second wind"
	case c.HP*10 < c.MaxHP*3 && ready[engine.AbilityHealingWord]:
		return "I heal myself"
	case c.HP*10 < c.MaxHP*3 && potion:
		return "I drink a potion"
	case cb.Round == 1 && ready[engine.AbilityBless] && len(st.Party) > 1:
		return "I bless the party"
	case ready[engine.AbilitySleep] && len(foes) >= 2:
		return "I cast sleep on the goblins"
	case ready[engine.AbilityShieldWall] && len(foes) >= 2 && len(st.Party) > 1 && cb.Round == 1:
		return "Shield wall!"
	case ready[engine.AbilityMagicMissile]:
		return "magic missile at " + weakest.Name
	case ready[engine.AbilityFirebolt]:
		return "firebolt at " + weakest.Name
	case ready[engine.AbilityPowerAttack]:
		return "power attack " + weakest.Name
	case ready[engine.AbilitySneakAttack]:
		for _, f := range foes {
			for who, target := range cb.Engaged {
				if target == f.Entry && who != engine.PCEntry(c.Seat) && who.IsPC() {
					return "sneak attack " + f.Name
				}
			}
		}
		if engine.HasStatus(c.Statuses, engine.EffectHidden) {
			return "sneak attack " + weakest.Name
		}
		if ready[engine.AbilityHide] {
			return "I hide"
		}
	case ready[engine.AbilityDisarm] && st.World.NPCs[weakest.Ref].Level > 1:
		return "I disarm " + weakest.Name
	}
	return "I attack " + weakest.Name
}
