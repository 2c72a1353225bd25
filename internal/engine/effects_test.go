package engine

import (
	"strings"
	"testing"
)

// startedCombat's order: dm, dm:boss, pc:2 (Brina), pc:1 (Aldric), dm:grunt.

func TestPoisonTicksAtStartOfBearersTurn(t *testing.T) {
	st := startedCombat(t)
	if _, err := st.ApplyEffect("Aldric", EffectPoisoned, 2, "test"); err != nil {
		t.Fatal(err)
	}
	hp := st.Party[0].HP
	st.AdvanceTurn(NewDice(1)) // boss
	st.AdvanceTurn(NewDice(1)) // brina
	if st.Party[0].HP != hp {
		t.Fatal("poison ticked before Aldric's turn")
	}
	_, evs := st.AdvanceTurn(ScriptedDice(4)) // Aldric: 1d6 → 4
	if st.Party[0].HP != hp-4 || st.Game.Combat.Current().Entry != "pc:1" {
		t.Fatalf("HP %d, current %s; want %d on Aldric's turn", st.Party[0].HP, st.Game.Combat.Current().Entry, hp-4)
	}
	if len(evs) < 2 || evs[0].Kind != "dice" || evs[0].Data.(DiceData).Purpose != "poison" || evs[1].Kind != "damage" {
		t.Errorf("events %+v", evs)
	}
	for st.Game.Combat.Current().Entry != "pc:1" || st.Game.Combat.Round != 3 {
		st.AdvanceTurn(ScriptedDice(2)) // the second and last tick
	}
	if st.Party[0].HP != hp-6 || HasStatus(st.Party[0].Statuses, EffectPoisoned) || len(st.Game.Combat.Effects) != 0 {
		t.Errorf("after 2 rounds: HP %d statuses %v effects %v", st.Party[0].HP, st.Party[0].Statuses, st.Game.Combat.Effects)
	}
}

func TestStunSkipsTurn(t *testing.T) {
	st := startedCombat(t)
	if _, err := st.ApplyEffect("pc:2", EffectStunned, 0, ""); err != nil {
		t.Fatal(err)
	}
	st.AdvanceTurn(NewDice(1)) // boss
	_, evs := st.AdvanceTurn(NewDice(1))
	if cur := st.Game.Combat.Current().Entry; cur != "pc:1" {
		t.Fatalf("after the boss came %s, want pc:1 (Brina is stunned)", cur)
	}
	skipped := false
	for _, e := range evs {
		d, _ := e.Data.(StatusData)
		skipped = skipped || d.SkippedTurn
	}
	if !skipped || HasStatus(st.Party[1].Statuses, EffectStunned) {
		t.Errorf("skip event %v, statuses %v", skipped, st.Party[1].Statuses)
	}
	// One round of stun: next round Brina acts again.
	for st.Game.Combat.Current().Entry != "pc:2" {
		if st.Game.Combat.Round > 2 {
			t.Fatal("Brina never acted again")
		}
		st.AdvanceTurn(NewDice(1))
	}
}

func TestBlessedAttacksWithAdvantage(t *testing.T) {
	st := startedCombat(t)
	if _, err := st.ApplyEffect("Aldric", EffectBlessed, 1, ""); err != nil {
		t.Fatal(err)
	}
	out, _, err := st.Attack(ScriptedDice(40, 50), "pc:1", "grunt")
	if err != nil {
		t.Fatal(err)
	}
	if out.Result.Attack != 40+1+20 || !out.Result.Hit {
		t.Errorf("blessed attack %+v, want 61 and a hit", out.Result)
	}
	// Blessed lapses at the end of Aldric's turn.
	for st.Game.Combat.Current().Entry != "pc:1" {
		st.AdvanceTurn(NewDice(1))
	}
	st.AdvanceTurn(NewDice(1))
	if HasStatus(st.Party[0].Statuses, EffectBlessed) {
		t.Error("blessed outlived its round")
	}
}

func TestApplyEffectRefusals(t *testing.T) {
	st := startedCombat(t)
	st.World.NPCs["grunt"].HP, st.World.NPCs["grunt"].Statuses = 0, []string{StatusDead}
	for name, c := range map[string]struct {
		target, effect string
		rounds         int
		mention        string
	}{
		"unknown effect": {"Aldric", "cursed", 0, "poisoned, stunned"},
		"dead target":    {"grunt", EffectPoisoned, 0, "down"},
		"too long":       {"Aldric", EffectPoisoned, 11, "1 to 10"},
		"unknown target": {"dragon", EffectPoisoned, 0, "not in this fight"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := st.ApplyEffect(c.target, c.effect, c.rounds, ""); err == nil || !strings.Contains(err.Error(), c.mention) {
				t.Errorf("err %v, want it to mention %q", err, c.mention)
			}
		})
	}
	if _, err := newTestState(t).ApplyEffect("Aldric", EffectPoisoned, 0, ""); err == nil {
		t.Error("effects outside a fight must be refused")
	}
}

func TestHealAndRevive(t *testing.T) {
	st := startedCombat(t)
	b := st.Party[1]
	b.HP, b.Statuses = 0, []string{StatusUnconscious}
	out, evs, err := st.Heal(ScriptedDice(3, 5), "Aldric", "Brina", "2d6+1")
	if err != nil {
		t.Fatal(err)
	}
	if out.Amount != 9 || b.HP != 9 || HasStatus(b.Statuses, StatusUnconscious) {
		t.Errorf("heal %+v, Brina %d HP %v", out, b.HP, b.Statuses)
	}
	if evs[0].Kind != "dice" || evs[1].Kind != "heal" {
		t.Errorf("events %+v", evs)
	}
	// Capped at max HP.
	out, _, _ = st.Heal(ScriptedDice(12, 12, 12, 12), "Aldric", "Brina", "4d12")
	if b.HP != b.MaxHP || out.Amount != b.MaxHP-9 {
		t.Errorf("overheal: %d/%d, amount %d", b.HP, b.MaxHP, out.Amount)
	}
	for name, c := range map[string]struct{ target, dice, mention string }{
		"too strong": {"Brina", "5d12", "too strong"},
		"bad dice":   {"Brina", "lots", "notation"},
		"dead":       {"grunt", "1d4", "cannot be healed"},
	} {
		t.Run(name, func(t *testing.T) {
			st.World.NPCs["grunt"].HP, st.World.NPCs["grunt"].Statuses = 0, []string{StatusDead}
			if _, _, err := st.Heal(NewDice(1), "Aldric", c.target, c.dice); err == nil || !strings.Contains(err.Error(), c.mention) {
				t.Errorf("err %v, want %q", err, c.mention)
			}
		})
	}
}

func TestApplyDamageIgnoresArmour(t *testing.T) {
	st := startedCombat(t)
	hp := st.Party[0].HP // Aldric wears mail (absorption 4)
	out, _, err := st.ApplyDamage(ScriptedDice(2, 3), "Aldric", "2d6", "falling beam")
	if err != nil {
		t.Fatal(err)
	}
	if out.Result.Damage != 5 || st.Party[0].HP != hp-5 {
		t.Errorf("damage %+v, HP %d→%d", out, hp, st.Party[0].HP)
	}
	if _, _, err := st.ApplyDamage(NewDice(1), "Aldric", "10d12", ""); err == nil {
		t.Error("oversized damage dice must be refused")
	}
}

func TestUseItem(t *testing.T) {
	st := startedCombat(t)
	a := st.Party[0]
	a.HP = 10
	potion := st.Inventory(a.ID)[0] // the warrior's kit potion
	out, evs, err := st.UseItem(ScriptedDice(4, 6), "pc:1", potion.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	// d100 potion: 2d10+5 → 4+6+5.
	if out.Amount != 15 || a.HP != 25 {
		t.Errorf("potion healed %d (HP %d)", out.Amount, a.HP)
	}
	if _, ok := st.World.Items[potion.ID]; ok {
		t.Error("the potion must be used up")
	}
	if last := evs[len(evs)-1]; last.Kind != "world" {
		t.Errorf("want an inventory world event, got %+v", last)
	}
	cases := map[string]struct {
		actor, item, target, code string
	}{
		"used up":         {"pc:1", potion.ID, "", ENOTFOUND},
		"not owned":       {"pc:2", "crown-1", "", EFORBIDDEN},
		"not consumable":  {"boss", "crown-1", "", EINVALID},
		"on a foe":        {"pc:1", "", "", EINVALID},
		"unknown by name": {"pc:2", "elixir", "", ENOTFOUND},
	}
	st.World.Items["p2"] = &Item{ID: "p2", Template: "potion", Name: "Potion", OwnerType: OwnerCharacter, OwnerID: a.ID}
	cases["on a foe"] = struct{ actor, item, target, code string }{"pc:1", "p2", "boss", EINVALID}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if _, _, err := st.UseItem(NewDice(1), c.actor, c.item, c.target); ErrorCode(err) != c.code {
				t.Errorf("err %v (%s), want %s", err, ErrorCode(err), c.code)
			}
		})
	}
}

func TestJoinCombatNPC(t *testing.T) {
	st := startedCombat(t)
	st.World.NPCs["wolf"] = &NPC{ID: "wolf", Name: "Wolf", Kind: "wolf", Location: "den", Hostile: true, Level: 1, HP: 8, MaxHP: 8, Hidden: true, Stats: Stats{AGI: 10}}
	st.AdvanceTurn(NewDice(1)) // the boss is acting
	e, _, err := st.JoinCombat(ScriptedDice(99), "wolf")
	if err != nil {
		t.Fatal(err)
	}
	cb := st.Game.Combat
	if e.Initiative != 99 || cb.Order[1].Entry != "dm:wolf" || cb.Current().Entry != "dm:boss" {
		t.Errorf("order %v, current %s", entries(cb), cb.Current().Entry)
	}
	if _, _, err := st.JoinCombat(NewDice(1), "wolf"); ErrorCode(err) != ECONFLICT {
		t.Errorf("joining twice: %v", err)
	}
	if _, _, err := st.JoinCombat(NewDice(1), "baker"); ErrorCode(err) != EINVALID {
		t.Errorf("an NPC elsewhere: %v", err)
	}
}

func TestFightsEndByMaxRounds(t *testing.T) {
	st := startedCombat(t)
	for i := 0; st.Game.Combat.Ending == ""; i++ {
		if i > 10*MaxRounds {
			t.Fatal("no forced end")
		}
		st.AdvanceTurn(NewDice(1))
	}
	if st.Game.Combat.Ending != OutcomeForcedEnd || st.Game.Combat.Round != MaxRounds+1 {
		t.Errorf("ending %q at round %d", st.Game.Combat.Ending, st.Game.Combat.Round)
	}
}

func TestSettleNarrativeTurn(t *testing.T) {
	st := startedCombat(t)
	if _, err := st.ApplyEffect("grunt", EffectPoisoned, 1, ""); err != nil {
		t.Fatal(err)
	}
	st.World.NPCs["boss"].HP, st.World.NPCs["boss"].Statuses = 0, []string{StatusDead}
	st.World.NPCs["grunt"].HP = 3
	ended, _ := st.SettleNarrativeTurn(ScriptedDice(5))
	if !ended || st.Game.Combat.Ending != OutcomePlayerWin {
		t.Errorf("poison should finish the grunt and win the fight: ended %v ending %q", ended, st.Game.Combat.Ending)
	}
}
