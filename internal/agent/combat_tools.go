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
	Description: "The combatant whose turn it is attacks a target. The engine rolls attack, defence and damage and applies the damage.",
	Parameters:  object([]string{"target"}, map[string]any{"target": str("The target's entry id (dm:<npc> or pc:<seat>), id or name.")}),
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
			Target string `json:"target"`
		}
		if err := decode(attackTool, args, &a); err != nil {
			return "", err
		}
		me, err := combatant(tc)
		if err != nil {
			return "", err
		}
		if done(tc) {
			return "", errf("This turn's action is already spent.")
		}
		out, evs, err := tc.State.Attack(tc.Dice, me.Entry, a.Target)
		if err != nil {
			return "", err
		}
		tc.emit(evs...)
		spend(tc)
		return toolResult(out), nil
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
		if done(tc) {
			return "", errf("This turn's action is already spent.")
		}
		evs, err := tc.State.Defend(me.Entry)
		if err != nil {
			return "", err
		}
		tc.emit(evs...)
		spend(tc)
		return toolResult(map[string]any{"defending": me.Name}), nil
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
		if done(tc) {
			return "", errf("This turn's action is already spent.")
		}
		ok, evs, err := tc.State.Flee(tc.Dice, me.Entry)
		if err != nil {
			return "", err
		}
		tc.emit(evs...)
		spend(tc)
		return toolResult(map[string]any{"fled": ok, "who": me.Name}), nil
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

// A combatant gets one action a turn; spent is tracked on the context.
func done(tc *ToolContext) bool { return tc.acted }

func spend(tc *ToolContext) { tc.acted = true }

// CombatTools is the combat agent's tool set.
func CombatTools() *Registry {
	return NewRegistry(attackTool, defendTool, fleeTool, statusTool, snapshotTool, continueTool, endCombatTool)
}

func sortRefs(r []itemRef) { sort.Slice(r, func(i, j int) bool { return r[i].ID < r[j].ID }) }
