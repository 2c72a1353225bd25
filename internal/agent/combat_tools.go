package agent

import (
	"encoding/json"
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

var attackTool = &Tool{
	Name:        "attack",
	Description: "The combatant whose turn it is attacks a target. The engine rolls attack, defence and damage and applies the damage. In narrative combat (no initiative queue) the DM may also make a standing foe attack by naming it as attacker.",
	Parameters: object([]string{"target"}, map[string]any{
		"target":   str("The target's entry id (dm:<npc> or pc:<seat>), id or name."),
		"attacker": str("Narrative combat only: a foe (dm:<npc>) that acts now. Leave empty for the combatant whose turn it is."),
	}),
}

var useItemTool = &Tool{
	Name:        "use_item",
	Description: "The combatant whose turn it is uses a consumable it carries (a healing potion, a bandage) on itself or an ally. The engine rolls the healing; the item is used up.",
	Parameters: object([]string{"item"}, map[string]any{
		"item":   str("The item instance id (from the inventory) or its exact name."),
		"target": str("Optional: the ally to treat (entry id or name); defaults to the user."),
	}),
}

var healTool = &Tool{
	Name:        "heal",
	Description: "The combatant whose turn it is heals a target that is not dead (a prayer, first aid). You name the dice (at most 4d12+10); the engine rolls them. An unconscious PC healed above 0 HP comes round.",
	Parameters: object([]string{"target", "dice"}, map[string]any{
		"target": str("Entry id or name of the one healed."),
		"dice":   str("Dice notation such as 1d8+2."),
	}),
}

var applyDamageTool = &Tool{
	Name:        "apply_damage",
	Description: "Damage that no weapon deals (a trap, a falling beam, fire) to a standing combatant, ignoring armour. You name the dice (at most 6d12+20) and the reason; the engine rolls them.",
	Parameters: object([]string{"target", "dice", "reason"}, map[string]any{
		"target": str("Entry id or name."),
		"dice":   str("Dice notation such as 2d6."),
		"reason": str("What deals the damage."),
	}),
}

var applyEffectTool = &Tool{
	Name:        "apply_effect",
	Description: "Put a timed effect on a standing combatant: poisoned (damage at the start of each of its turns), stunned (loses its next turn), blessed (attacks with advantage), weakened (attacks with disadvantage).",
	Parameters: object([]string{"target", "effect"}, map[string]any{
		"target": str("Entry id or name."),
		"effect": strEnum("The effect.", engine.EffectNames()...),
		"rounds": map[string]any{"type": "integer", "minimum": 1, "maximum": 10, "description": "Optional duration in rounds (default per effect)."},
	}),
}

var addCombatantTool = &Tool{
	Name:        "add_combatant",
	Description: "An NPC at the fight's location joins the fight (reinforcements, an ally stepping in). The engine rolls its initiative and gives it its place.",
	Parameters:  object([]string{"npc"}, map[string]any{"npc": str("The NPC's id or name.")}),
}

var defendTool = &Tool{
	Name:        "defend",
	Description: "The combatant whose turn it is takes a defensive stance until its next turn (harder to hit).",
	Parameters:  object(nil, map[string]any{}),
}

var fleeTool = &Tool{
	Name:        "attempt_flee",
	Description: "The combatant whose turn it is tries to escape: a contested agility roll against the quickest foe standing.",
	Parameters:  object(nil, map[string]any{}),
}

var statusTool = &Tool{
	Name:        "check_combat_status",
	Description: "Check whether the fight goes on: returns COMBAT_CONTINUE or COMBAT_END:<outcome>, with who is still standing.",
	Parameters:  object(nil, map[string]any{}),
}

var snapshotTool = &Tool{
	Name:        "get_combat_snapshot",
	Description: "Get the whole fight: round, initiative order, every combatant's HP, weapon and statuses, and the recent log.",
	Parameters:  object(nil, map[string]any{}),
}

var continueTool = &Tool{
	Name:        "continue_combat",
	Description: "OUTPUT: end this combat turn with its narration. The engine then moves to the next initiative entry.",
	Parameters:  object([]string{"narration"}, map[string]any{"narration": str("What happened this turn.")}),
	Output:      true,
}

var endCombatTool = &Tool{
	Name:        "end_combat",
	Description: "OUTPUT: end the fight. When the engine reports COMBAT_END the outcome is its; otherwise only player_flee, npc_flee (surrender or rout) or forced_end. Rewards are computed by the engine.",
	Parameters: object([]string{"narration", "outcome"}, map[string]any{
		"narration": str("How the fight ends."),
		"outcome":   strEnum("The outcome.", engine.OutcomePlayerWin, engine.OutcomePlayerFlee, engine.OutcomePlayerDie, engine.OutcomeNPCFlee, engine.OutcomeForcedEnd),
	}),
	Output: true,
}

func init() {
	attackTool.Run = func(tc *ToolContext, args json.RawMessage) (string, error) {
		var a struct {
			Target   string `json:"target"`
			Attacker string `json:"attacker"`
		}
		if err := decode(attackTool, args, &a); err != nil {
			return "", err
		}
		me, err := combatant(tc)
		if a.Attacker != "" && (err != nil || a.Attacker != me.Entry) {
			me, err = foeActor(tc, a.Attacker)
		}
		if err != nil {
			return "", err
		}
		return takeAction(tc, me, func() (any, []engine.Event, error) { return tc.State.Attack(tc.Dice, me.Entry, a.Target) })
	}
	defendTool.Run = func(tc *ToolContext, args json.RawMessage) (string, error) {
		var a noArgs
		if err := decode(defendTool, args, &a); err != nil {
			return "", err
		}
		me, err := combatant(tc)
		if err != nil {
			return "", err
		}
		return takeAction(tc, me, func() (any, []engine.Event, error) {
			evs, err := tc.State.Defend(me.Entry)
			return map[string]any{"defending": me.Name}, evs, err
		})
	}
	fleeTool.Run = func(tc *ToolContext, args json.RawMessage) (string, error) {
		var a noArgs
		if err := decode(fleeTool, args, &a); err != nil {
			return "", err
		}
		me, err := combatant(tc)
		if err != nil {
			return "", err
		}
		return takeAction(tc, me, func() (any, []engine.Event, error) {
			ok, evs, err := tc.State.Flee(tc.Dice, me.Entry)
			return map[string]any{"fled": ok, "who": me.Name}, evs, err
		})
	}
	statusTool.Run = func(tc *ToolContext, args json.RawMessage) (string, error) {
		var a noArgs
		if err := decode(statusTool, args, &a); err != nil {
			return "", err
		}
		cv := combatOf(tc.State)
		if cv == nil {
			return "", errf("There is no fight under way.")
		}
		status := "COMBAT_CONTINUE"
		if out := tc.State.CheckEnd(); out != "" {
			status = "COMBAT_END:" + out
		}
		var foes, party []string
		for _, c := range cv.Combatants {
			if !c.CanAct {
				continue
			}
			if c.Side == "foes" {
				foes = append(foes, c.Name)
			} else {
				party = append(party, c.Name)
			}
		}
		return toolResult(map[string]any{"status": status, "foes_standing": foes, "party_standing": party}), nil
	}
	snapshotTool.Run = func(tc *ToolContext, args json.RawMessage) (string, error) {
		var a noArgs
		if err := decode(snapshotTool, args, &a); err != nil {
			return "", err
		}
		cv := combatOf(tc.State)
		if cv == nil {
			return "", errf("There is no fight under way.")
		}
		return toolResult(cv), nil
	}
	continueTool.Run = func(tc *ToolContext, args json.RawMessage) (string, error) {
		var a struct {
			Narration string `json:"narration"`
		}
		if err := decode(continueTool, args, &a); err != nil {
			return "", err
		}
		cb := tc.State.Game.Combat
		if cb == nil {
			return "", errf("There is no fight under way: use end_combat only during a fight.")
		}
		if cb.Ending != "" || tc.Turn.Kind == TurnResolution {
			return "", errf("The fight is over (%s): call end_combat with that outcome.", cb.Ending)
		}
		tc.Output = &Output{Tool: continueTool.Name, Narration: strings.TrimSpace(a.Narration)}
		tc.emit(narrationEvent(engine.AgentCombat, tc.Output))
		return "Turn ended.", nil
	}
	endCombatTool.Run = func(tc *ToolContext, args json.RawMessage) (string, error) {
		var a struct {
			Narration string `json:"narration"`
			Outcome   string `json:"outcome"`
		}
		if err := decode(endCombatTool, args, &a); err != nil {
			return "", err
		}
		out := &Output{Tool: endCombatTool.Name, Narration: strings.TrimSpace(a.Narration)}
		res, evs, err := tc.State.EndCombat(a.Outcome, out.Narration)
		if err != nil {
			return "", err
		}
		out.Outcome = res.Outcome
		tc.Output = out
		tc.emit(narrationEvent(engine.AgentCombat, out))
		tc.emit(evs...)
		return toolResult(res), nil
	}
}

// takeAction runs a combatant's one action of the turn: it is spent before
// do runs and given back if do is refused.
func takeAction(tc *ToolContext, me engine.Combatant, do func() (any, []engine.Event, error)) (string, error) {
	if err := spend(tc, me); err != nil {
		return "", err
	}
	out, evs, err := do()
	if err != nil {
		delete(tc.acted, me.Entry)
		return "", err
	}
	tc.emit(evs...)
	return toolResult(out), nil
}

// spend uses up a combatant's one action of the turn, or says it is spent.
func spend(tc *ToolContext, e engine.Combatant) error {
	if tc.acted[e.Entry] {
		return errf("%s has already acted this turn; end the turn with continue_combat.", e.Name)
	}
	if tc.acted == nil {
		tc.acted = map[string]bool{}
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
		if e.Entry == ref || e.Ref == ref || strings.EqualFold(e.Name, ref) {
			if e.Kind != engine.KindNPC {
				return engine.Combatant{}, errf("%s is a player character: only its player decides what it does.", e.Name)
			}
			return e, nil
		}
	}
	return engine.Combatant{}, errf("%q is not in this fight.", ref)
}

func init() {
	useItemTool.Run = func(tc *ToolContext, args json.RawMessage) (string, error) {
		var a struct {
			Item   string `json:"item"`
			Target string `json:"target"`
		}
		if err := decode(useItemTool, args, &a); err != nil {
			return "", err
		}
		me, err := combatant(tc)
		if err != nil {
			return "", err
		}
		return takeAction(tc, me, func() (any, []engine.Event, error) {
			out, evs, err := tc.State.UseItem(tc.Dice, me.Entry, a.Item, a.Target)
			return map[string]any{"used": a.Item, "by": me.Name, "healed": out}, evs, err
		})
	}
	healTool.Run = func(tc *ToolContext, args json.RawMessage) (string, error) {
		var a struct {
			Target string `json:"target"`
			Dice   string `json:"dice"`
		}
		if err := decode(healTool, args, &a); err != nil {
			return "", err
		}
		me, err := combatant(tc)
		if err != nil {
			return "", err
		}
		return takeAction(tc, me, func() (any, []engine.Event, error) { return tc.State.Heal(tc.Dice, me.Name, a.Target, a.Dice) })
	}
	applyDamageTool.Run = func(tc *ToolContext, args json.RawMessage) (string, error) {
		var a struct {
			Target string `json:"target"`
			Dice   string `json:"dice"`
			Reason string `json:"reason"`
		}
		if err := decode(applyDamageTool, args, &a); err != nil {
			return "", err
		}
		out, evs, err := tc.State.ApplyDamage(tc.Dice, a.Target, a.Dice, a.Reason)
		if err != nil {
			return "", err
		}
		tc.emit(evs...)
		return toolResult(out), nil
	}
	applyEffectTool.Run = func(tc *ToolContext, args json.RawMessage) (string, error) {
		var a struct {
			Target string `json:"target"`
			Effect string `json:"effect"`
			Rounds int    `json:"rounds"`
		}
		if err := decode(applyEffectTool, args, &a); err != nil {
			return "", err
		}
		evs, err := tc.State.ApplyEffect(a.Target, a.Effect, a.Rounds, "DM")
		if err != nil {
			return "", err
		}
		tc.emit(evs...)
		return toolResult(map[string]any{"applied": a.Effect, "to": a.Target}), nil
	}
	addCombatantTool.Run = func(tc *ToolContext, args json.RawMessage) (string, error) {
		var a struct {
			NPC string `json:"npc"`
		}
		if err := decode(addCombatantTool, args, &a); err != nil {
			return "", err
		}
		e, evs, err := tc.State.JoinCombat(tc.Dice, a.NPC)
		if err != nil {
			return "", err
		}
		tc.emit(evs...)
		tc.emit(engine.Event{Kind: "combatant_joined", Data: map[string]any{"entry": e.Entry, "name": e.Name, "initiative": e.Initiative}})
		return toolResult(map[string]any{"joined": e.Name, "entry": e.Entry, "initiative": e.Initiative}), nil
	}
}

// CombatTools is the combat agent's tool set.
func CombatTools() *Registry {
	return NewRegistry(attackTool, defendTool, fleeTool, useItemTool, healTool, applyDamageTool, applyEffectTool,
		addCombatantTool, statusTool, snapshotTool, continueTool, endCombatTool)
}

func sortRefs(r []itemRef) { sort.Slice(r, func(i, j int) bool { return r[i].ID < r[j].ID }) }
