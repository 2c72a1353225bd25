package offline

// NPC tactics: what an NPC does on its turn, by its profile (seed 000).

import (
	"sort"
	"strings"

	"tavern/internal/agent"
	"tavern/internal/engine"
)

// npcAction decides an NPC's move from its profile (seed 000's rules:
// flee when badly hurt and cowardly, or when alone and told to, never
// when it fights to the death; focus the weakest or the strongest if its
// tactics say so; otherwise attack).
func (t *offlineTurn) npcAction() reply {
	p := t.Ctx.NPC
	if p == nil {
		return call("continue_combat", map[string]any{"narration": "The creature hesitates."})
	}
	tactics := strings.ToLower(p.Tactics + " " + p.Personality)
	hurt := p.MaxHP > 0 && p.HP*3 < p.MaxHP
	cowardly := (strings.Contains(tactics, "coward") || strings.Contains(tactics, "flee")) &&
		!strings.Contains(tactics, "never flee") && !strings.Contains(tactics, "to the death")
	alone := len(t.allies()) == 0
	if (hurt && cowardly) || (alone && strings.Contains(tactics, "flees when alone") && p.HP < p.MaxHP) {
		return call("attempt_flee", map[string]any{})
	}
	foes := t.foes()
	if len(foes) == 0 {
		return call("continue_combat", map[string]any{"narration": p.Name + " finds no one left to fight."})
	}
	target := foes[int(fnvHash(t.key))%len(foes)]
	if strings.Contains(tactics, "strongest") {
		// The one standing with the most HP: the fighter who threatens most.
		sort.SliceStable(foes, func(i, j int) bool {
			if foes[i].HP != foes[j].HP {
				return foes[i].HP > foes[j].HP
			}
			return foes[i].Name < foes[j].Name
		})
		target = foes[0]
	} else if strings.Contains(tactics, "weakest") {
		sort.SliceStable(foes, func(i, j int) bool {
			if foes[i].HP != foes[j].HP {
				return foes[i].HP < foes[j].HP
			}
			return foes[i].Name < foes[j].Name
		})
		target = foes[0]
	}
	// Hurt, it heals: an ability before a potion (uses come back, potions
	// do not); then its other abilities, then its weapon.
	if p.HP*2 < p.MaxHP {
		if c, ok := t.npcAbility(target, true); ok {
			return c
		}
		for _, it := range p.Items {
			if strings.Contains(strings.ToLower(it.Name), "potion") {
				return call("use_item", map[string]any{"item": it.ID})
			}
		}
	}
	if c, ok := t.npcAbility(target, false); ok {
		return c
	}
	return call("attack", map[string]any{"target": target.Entry})
}

func (t *offlineTurn) allies() []agent.CombatantView {
	var out []agent.CombatantView
	for _, c := range t.Ctx.Combat.Combatants {
		if c.Side == engine.SideFoes && c.CanAct && (t.Ctx.NPC == nil || c.Entry != string(engine.NPCEntry(t.Ctx.NPC.ID))) {
			out = append(out, c)
		}
	}
	return out
}
