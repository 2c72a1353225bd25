package agent

import (
	"tavern/internal/engine"
)

// Abilities and rests (PROTOCOL.md "Abilities"): the combat agent names an
// ability and its target, the narrative agent a rest; the engine rolls and
// decides what they do.

// AbilityArgs are the arguments of use_ability.
type AbilityArgs struct {
	Ability string `json:"ability"`
	Target  string `json:"target"`
	User    string `json:"user"`
}

func useAbilityTool() *Tool {
	return defineTool("use_ability", "The combatant whose turn it is uses one of its abilities (listed in the context: actor.abilities for a player character, npc_profile.abilities for an NPC) on a target. The engine rolls every die, applies the result and spends a use; it refuses an ability with no use left or a target it cannot reach, and says what can be done instead.", []string{"ability"},
		propsOf[AbilityArgs](map[string]map[string]any{
			"ability": {"description": "The ability's id.", "enum": engine.AbilityIDs()},
			"target":  {"description": "Entry id (dm:<npc> or pc:<seat>) or name of the target: a foe for an enemy ability, an ally for an ally ability (default: the user); empty for self and party abilities."},
			"user":    {"description": "Narrative combat only: a foe (dm:<npc>) that uses its ability now. Leave empty for the combatant whose turn it is."},
		}),
		func(tc *ToolContext, a AbilityArgs) (any, error) {
			me, err := combatant(tc)
			if a.User != "" && (err != nil || engine.EntryID(a.User) != me.Entry) {
				me, err = foeActor(tc, a.User)
			}
			if err != nil {
				return nil, err
			}
			return takeAction(tc, me, func() (any, []engine.Event, error) {
				return tc.State.UseAbility(tc.Dice, string(me.Entry), a.Ability, a.Target)
			})
		})
}

// RestArgs are the arguments of rest.
type RestArgs struct {
	Kind string `json:"kind"`
}

func restTool() *Tool {
	return defineTool("rest", "The party rests out of a fight: a short rest (an hour: each character rolls back some HP, short-rest abilities come back) or a long rest (a night: full HP and every ability). The engine refuses it in a fight, with foes about, or right after another rest.", []string{"kind"},
		propsOf[RestArgs](map[string]map[string]any{
			"kind": {"description": "short or long.", "enum": []string{engine.RestShort, engine.RestLong}},
		}),
		func(tc *ToolContext, a RestArgs) (any, error) {
			out, evs, err := tc.State.Rest(tc.Dice, a.Kind)
			if err != nil {
				return nil, err
			}
			tc.emit(evs...)
			return out, nil
		})
}
