package agent

import (
	"sort"
	"strings"

	"tavern/internal/engine"
)

// combatant returns the initiative entry acting this turn; bookend and
// resolution turns have none.
func combatant(tc *ToolContext) (engine.Combatant, error) {
	cb := tc.State.Game.Combat
	if cb == nil {
		return engine.Combatant{}, errf("There is no fight under way.")
	}
	switch tc.Turn.Kind {
	case TurnPlayer:
		c, err := actor(tc)
		if err != nil {
			return engine.Combatant{}, err
		}
		e, ok := cb.Entry(engine.PCEntry(c.Seat))
		if !ok {
			return engine.Combatant{}, errf("%s is not in this fight.", c.Name)
		}
		return e, nil
	case TurnNPC:
		return tc.Turn.Entry, nil
	}
	return engine.Combatant{}, errf("Nobody acts on the DM's %s turn: narrate, then call continue_combat (or end_combat if the fight is over).", tc.Turn.Kind)
}

func attackTool() *Tool {
	return defineTool("attack", "The combatant whose turn it is attacks a target. The engine rolls attack, defence and damage and applies the damage. In narrative combat (no initiative queue) the DM may also make a standing foe attack by naming it as attacker.", []string{"target"},
		map[string]any{
			"target":   str("The target's entry id (dm:<npc> or pc:<seat>), id or name."),
			"attacker": str("Narrative combat only: a foe (dm:<npc>) that acts now. Leave empty for the combatant whose turn it is."),
		},
		func(tc *ToolContext, a struct {
			Target   string `json:"target"`
			Attacker string `json:"attacker"`
		}) (any, error) {
			me, err := combatant(tc)
			if a.Attacker != "" && (err != nil || engine.EntryID(a.Attacker) != me.Entry) {
				me, err = foeActor(tc, a.Attacker)
			}
			if err != nil {
				return nil, err
			}
			return takeAction(tc, me, func() (any, []engine.Event, error) { return tc.State.Attack(tc.Dice, string(me.Entry), a.Target) })
		})
}

func defendTool() *Tool {
	return defineTool("defend", "The combatant whose turn it is takes a defensive stance until its next turn (harder to hit).", nil,
		map[string]any{},
		func(tc *ToolContext, _ noArgs) (any, error) {
			return asCombatant(tc, func(me engine.Combatant) (any, []engine.Event, error) {
				evs, err := tc.State.Defend(string(me.Entry))
				return map[string]any{"defending": me.Name}, evs, err
			})
		})
}

func fleeTool() *Tool {
	return defineTool("attempt_flee", "The combatant whose turn it is tries to escape: a contested agility roll against the quickest foe standing.", nil,
		map[string]any{},
		func(tc *ToolContext, _ noArgs) (any, error) {
			return asCombatant(tc, func(me engine.Combatant) (any, []engine.Event, error) {
				ok, evs, err := tc.State.Flee(tc.Dice, string(me.Entry))
				return map[string]any{"fled": ok, "who": me.Name}, evs, err
			})
		})
}

func useItemTool() *Tool {
	return defineTool("use_item", "The combatant whose turn it is uses a consumable it carries (a healing potion, a bandage) on itself or an ally. The engine rolls the healing; the item is used up.", []string{"item"},
		map[string]any{
			"item":   str("The item instance id (from the inventory) or its exact name."),
			"target": str("Optional: the ally to treat (entry id or name); defaults to the user."),
		},
		func(tc *ToolContext, a struct {
			Item   string `json:"item"`
			Target string `json:"target"`
		}) (any, error) {
			return asCombatant(tc, func(me engine.Combatant) (any, []engine.Event, error) {
				out, evs, err := tc.State.UseItem(tc.Dice, string(me.Entry), a.Item, a.Target)
				return map[string]any{"used": a.Item, "by": me.Name, "healed": out}, evs, err
			})
		})
}

func healTool() *Tool {
	return defineTool("heal", "The combatant whose turn it is heals a target that is not dead (a prayer, first aid). You name the dice (at most 4d12+10); the engine rolls them. An unconscious PC healed above 0 HP comes round.", []string{"target", "dice"},
		map[string]any{
			"target": str("Entry id or name of the one healed."),
			"dice":   str("Dice notation such as 1d8+2."),
		},
		func(tc *ToolContext, a struct {
			Target string `json:"target"`
			Dice   string `json:"dice"`
		}) (any, error) {
			return asCombatant(tc, func(me engine.Combatant) (any, []engine.Event, error) {
				return tc.State.Heal(tc.Dice, me.Name, a.Target, a.Dice)
			})
		})
}

func applyDamageTool() *Tool {
	return defineTool("apply_damage", "Damage that no weapon deals (a trap, a falling beam, fire) to a standing combatant, ignoring armour. You name the dice (at most 6d12+20) and the reason; the engine rolls them.", []string{"target", "dice", "reason"},
		map[string]any{
			"target": str("Entry id or name."),
			"dice":   str("Dice notation such as 2d6."),
			"reason": str("What deals the damage."),
		},
		func(tc *ToolContext, a struct {
			Target string `json:"target"`
			Dice   string `json:"dice"`
			Reason string `json:"reason"`
		}) (any, error) {
			out, evs, err := tc.State.ApplyDamage(tc.Dice, a.Target, a.Dice, a.Reason)
			if err != nil {
				return nil, err
			}
			tc.emit(evs...)
			return out, nil
		})
}

func applyEffectTool() *Tool {
	return defineTool("apply_effect", "Put a timed effect on a standing combatant: poisoned (damage at the start of each of its turns), stunned (loses its next turn), blessed (attacks with advantage), weakened (attacks with disadvantage).", []string{"target", "effect"},
		map[string]any{
			"target": str("Entry id or name."),
			"effect": strEnum("The effect.", engine.EffectNames()...),
			"rounds": map[string]any{"type": "integer", "minimum": 1, "maximum": 10, "description": "Optional duration in rounds (default per effect)."},
		},
		func(tc *ToolContext, a struct {
			Target string `json:"target"`
			Effect string `json:"effect"`
			Rounds int    `json:"rounds"`
		}) (any, error) {
			evs, err := tc.State.ApplyEffect(a.Target, a.Effect, a.Rounds, "DM")
			if err != nil {
				return nil, err
			}
			tc.emit(evs...)
			return map[string]any{"applied": a.Effect, "to": a.Target}, nil
		})
}

func addCombatantTool() *Tool {
	return defineTool("add_combatant", "An NPC at the fight's location joins the fight (reinforcements, an ally stepping in). The engine rolls its initiative and gives it its place.", []string{"npc"},
		map[string]any{"npc": str("The NPC's id or name.")},
		func(tc *ToolContext, a struct {
			NPC string `json:"npc"`
		}) (any, error) {
			e, evs, err := tc.State.JoinCombat(tc.Dice, a.NPC)
			if err != nil {
				return nil, err
			}
			tc.emit(evs...)
			tc.emit(engine.CombatantJoinedEvent(e))
			return map[string]any{"joined": e.Name, "entry": e.Entry, "initiative": e.Initiative}, nil
		})
}

func statusTool() *Tool {
	return defineTool("check_combat_status", "Check whether the fight goes on: returns COMBAT_CONTINUE or COMBAT_END:<outcome>, with who is still standing.", nil,
		map[string]any{},
		func(tc *ToolContext, _ noArgs) (any, error) {
			cv := combatOf(tc.State)
			if cv == nil {
				return nil, errf("There is no fight under way.")
			}
			status := "COMBAT_CONTINUE"
			if out := tc.State.CheckEnd(); out != "" {
				status = "COMBAT_END:" + string(out)
			}
			var foes, party []string
			for _, c := range cv.Combatants {
				if !c.CanAct {
					continue
				}
				if c.Side == engine.SideFoes {
					foes = append(foes, c.Name)
				} else {
					party = append(party, c.Name)
				}
			}
			return map[string]any{"status": status, "foes_standing": foes, "party_standing": party}, nil
		})
}

func snapshotTool() *Tool {
	return defineTool("get_combat_snapshot", "Get the whole fight: round, initiative order, every combatant's HP, weapon and statuses, and the recent log.", nil,
		map[string]any{},
		func(tc *ToolContext, _ noArgs) (any, error) {
			cv := combatOf(tc.State)
			if cv == nil {
				return nil, errf("There is no fight under way.")
			}
			return cv, nil
		})
}

func continueTool() *Tool {
	return defineOutput("continue_combat", "OUTPUT: end this combat turn with its narration. The engine then moves to the next initiative entry.", []string{"narration"},
		map[string]any{"narration": str("What happened this turn.")},
		func(tc *ToolContext, a struct {
			Narration string `json:"narration"`
		}) (any, error) {
			cb := tc.State.Game.Combat
			if cb == nil {
				return nil, errf("There is no fight under way: use end_combat only during a fight.")
			}
			if cb.Ending != "" || tc.Turn.Kind == TurnResolution {
				return nil, errf("The fight is over (%s): call end_combat with that outcome.", cb.Ending)
			}
			tc.Output = &Output{Tool: "continue_combat", Narration: strings.TrimSpace(a.Narration)}
			tc.emit(narrationEvent(tc, engine.AgentCombat, tc.Output))
			return "Turn ended.", nil
		})
}

func endCombatTool() *Tool {
	return defineOutput("end_combat", "OUTPUT: end the fight. When the engine reports COMBAT_END the outcome is its; otherwise only player_flee, npc_flee (surrender or rout) or forced_end. Rewards are computed by the engine.", []string{"narration", "outcome"},
		map[string]any{
			"narration": str("How the fight ends."),
			"outcome":   strEnum("The outcome.", string(engine.OutcomePlayerWin), string(engine.OutcomePlayerFlee), string(engine.OutcomePlayerDie), string(engine.OutcomeNPCFlee), string(engine.OutcomeForcedEnd)),
		},
		func(tc *ToolContext, a struct {
			Narration string         `json:"narration"`
			Outcome   engine.Outcome `json:"outcome"`
		}) (any, error) {
			out := &Output{Tool: "end_combat", Narration: strings.TrimSpace(a.Narration)}
			res, evs, err := tc.State.EndCombat(a.Outcome, out.Narration)
			if err != nil {
				return nil, err
			}
			out.Outcome = string(res.Outcome)
			tc.Output = out
			tc.emit(narrationEvent(tc, engine.AgentCombat, out))
			tc.emit(evs...)
			return res, nil
		})
}

// asCombatant runs the one action of the combatant whose turn it is.
func asCombatant(tc *ToolContext, do func(me engine.Combatant) (any, []engine.Event, error)) (any, error) {
	me, err := combatant(tc)
	if err != nil {
		return nil, err
	}
	return takeAction(tc, me, func() (any, []engine.Event, error) { return do(me) })
}

// takeAction runs a combatant's one action of the turn: it is spent before
// do runs and given back if do is refused.
func takeAction(tc *ToolContext, me engine.Combatant, do func() (any, []engine.Event, error)) (any, error) {
	if err := spend(tc, me); err != nil {
		return nil, err
	}
	out, evs, err := do()
	if err != nil {
		delete(tc.acted, me.Entry)
		return nil, err
	}
	tc.emit(evs...)
	return out, nil
}

// spend uses up a combatant's one action of the turn, or says it is spent.
func spend(tc *ToolContext, e engine.Combatant) error {
	if tc.acted[e.Entry] {
		return errf("%s has already acted this turn; end the turn with continue_combat.", e.Name)
	}
	if tc.acted == nil {
		tc.acted = map[engine.EntryID]bool{}
	}
	tc.acted[e.Entry] = true
	return nil
}

// foeActor resolves a foe the DM makes act during a narrative-combat turn.
func foeActor(tc *ToolContext, ref string) (engine.Combatant, error) {
	st := tc.State
	if st.Config.CombatMode != engine.CombatNarrative || tc.Turn.Kind != TurnPlayer {
		return engine.Combatant{}, errf("Only the combatant whose turn it is acts now (initiative is enforced).")
	}
	for _, e := range st.Game.Combat.Order {
		if e.Entry == engine.EntryID(ref) || e.Ref == ref || strings.EqualFold(e.Name, ref) {
			if e.Kind != engine.KindNPC {
				return engine.Combatant{}, errf("%s is a player character: only its player decides what it does.", e.Name)
			}
			return e, nil
		}
	}
	return engine.Combatant{}, errf("%q is not in this fight.", ref)
}

func sortRefs(r []ItemRef) { sort.Slice(r, func(i, j int) bool { return r[i].ID < r[j].ID }) }
