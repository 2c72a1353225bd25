package engine

import (
	"reflect"
	"strings"
	"testing"
)

func entries(cb *Combat) []string {
	var out []string
	for _, e := range cb.Order {
		out = append(out, string(e.Entry))
	}
	return out
}

func TestSortInitiativeTieBreaks(t *testing.T) {
	order := []Combatant{
		{Entry: "pc:2", Kind: KindPC, Name: "brina", Initiative: 50, Mod: 1},
		{Entry: "dm:z", Kind: KindNPC, Name: "Zed", Initiative: 50, Mod: 3},
		{Entry: "pc:1", Kind: KindPC, Name: "Aldric", Initiative: 50, Mod: 1},
		{Entry: "dm:w", Kind: KindNPC, Name: "Wolf", Initiative: 70, Mod: 0},
		{Entry: "dm", Kind: KindBookend, Name: "DM"},
		{Entry: "dm:g", Kind: KindNPC, Name: "Goblin", Initiative: 10, Mod: 5},
	}
	SortInitiative(order)
	var got []string
	for _, e := range order {
		got = append(got, string(e.Entry))
	}
	// Bookend first; then by initiative; ties by higher modifier, then by
	// name (case-insensitive).
	want := []string{"dm", "dm:w", "dm:z", "pc:1", "pc:2", "dm:g"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
}

func TestStartCombat(t *testing.T) {
	st := newTestState(t)
	// Rolls in order: PCs by seat (Aldric, Brina), then NPCs by id (boss, grunt).
	d := ScriptedDice(30, 30, 80, 5)
	cb, evs, err := st.StartCombat(d, []string{"Boss"})
	if err != nil {
		t.Fatal(err)
	}
	// Aldric 30+1, Brina 30+3, Boss 80+2, Grunt 5+0; the grunt joins
	// because every hostile NPC present joins the fight.
	want := []string{"dm", "dm:boss", "pc:2", "pc:1", "dm:grunt"}
	if got := entries(cb); !reflect.DeepEqual(got, want) {
		t.Errorf("initiative = %v, want %v", got, want)
	}
	if cb.Round != 1 || cb.Index != 0 || cb.Current().Kind != KindBookend {
		t.Errorf("combat starts at round %d index %d (%s), want the bookend of round 1", cb.Round, cb.Index, cb.Current().Entry)
	}
	if st.Game.Mode != ModeCombat || !reflect.DeepEqual(cb.SavedQueue, []EntryID{"pc:1", "pc:2"}) {
		t.Errorf("mode %s, saved queue %v", st.Game.Mode, cb.SavedQueue)
	}
	dice := 0
	for _, e := range evs {
		if e.Kind == "dice" {
			dice++
			if d, _ := e.Data.(DiceData); d.Purpose != "initiative" {
				t.Errorf("dice purpose %q", d.Purpose)
			}
		}
	}
	if dice != 4 {
		t.Errorf("%d initiative dice events, want 4", dice)
	}
	if _, _, err := st.StartCombat(d, []string{"boss"}); ErrorCode(err) != ECONFLICT {
		t.Errorf("second start: %v, want a conflict", err)
	}
}

func TestStartCombatRefusals(t *testing.T) {
	cases := map[string]struct {
		foe  string
		prep func(*State)
		code string
	}{
		"unknown":    {foe: "dragon", code: ENOTFOUND},
		"elsewhere":  {foe: "baker", code: EINVALID},
		"dead":       {foe: "boss", prep: func(s *State) { s.World.NPCs["boss"].HP = 0; s.World.NPCs["boss"].Statuses = []string{StatusDead} }, code: EINVALID},
		"nobody up":  {foe: "boss", prep: func(s *State) { s.Party[0].HP = 0; s.Party[1].HP = 0 }, code: EINVALID},
		"in combat?": {foe: "grunt", prep: func(s *State) { s.Game.Mode = ModeCombat }, code: ECONFLICT},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			st := newTestState(t)
			if c.prep != nil {
				c.prep(st)
			}
			_, _, err := st.StartCombat(NewDice(1), []string{c.foe})
			if ErrorCode(err) != c.code {
				t.Fatalf("err = %v (%s), want code %s", err, ErrorCode(err), c.code)
			}
			if st.Game.Combat != nil {
				t.Error("a refused start must not create a combat")
			}
		})
	}
}

func startedCombat(t *testing.T) *State {
	t.Helper()
	st := newTestState(t)
	if _, _, err := st.StartCombat(ScriptedDice(30, 30, 80, 5), []string{"boss"}); err != nil {
		t.Fatal(err)
	}
	return st // order: dm, dm:boss, pc:2, pc:1, dm:grunt
}

func TestAdvanceTurnSkipsAndWraps(t *testing.T) {
	st := startedCombat(t)
	cb := st.Game.Combat
	var seen []string
	for range 5 {
		if ended, _ := st.AdvanceTurn(NewDice(1)); ended {
			t.Fatal("ended early")
		}
		seen = append(seen, string(cb.Current().Entry))
	}
	want := []string{"dm:boss", "pc:2", "pc:1", "dm:grunt", "dm"}
	if !reflect.DeepEqual(seen, want) || cb.Round != 2 {
		t.Fatalf("turns %v round %d, want %v round 2", seen, cb.Round, want)
	}
	// Brina falls unconscious and the boss flees: both are skipped.
	st.Party[1].HP = 0
	st.Party[1].Statuses = []string{StatusUnconscious}
	st.World.NPCs["boss"].Statuses = []string{StatusFled}
	seen = nil
	for range 3 {
		st.AdvanceTurn(NewDice(1))
		seen = append(seen, string(cb.Current().Entry))
	}
	want = []string{"pc:1", "dm:grunt", "dm"}
	if !reflect.DeepEqual(seen, want) || cb.Round != 3 {
		t.Errorf("turns %v round %d, want %v round 3", seen, cb.Round, want)
	}
}

func TestDefendLapsesAtOwnTurn(t *testing.T) {
	st := startedCombat(t)
	st.AdvanceTurn(NewDice(1)) // boss
	st.AdvanceTurn(NewDice(1)) // brina
	if _, err := st.Defend("pc:2"); err != nil {
		t.Fatal(err)
	}
	for cur := EntryID(""); cur != "pc:2"; cur = st.Game.Combat.Current().Entry {
		if !HasStatus(st.Party[1].Statuses, StatusDefending) {
			t.Fatalf("defending lapsed before Brina's next turn (at %s)", cur)
		}
		st.AdvanceTurn(NewDice(1))
	}
	if HasStatus(st.Party[1].Statuses, StatusDefending) {
		t.Error("defending should lapse at the start of Brina's next turn")
	}
}

func TestAttackAppliesDamageAndDeath(t *testing.T) {
	st := startedCombat(t)
	// Aldric (AGI 12 → +1, sword 10) on the grunt (AGI 10, no armour, 12 HP).
	out, evs, err := st.Attack(ScriptedDice(70, 20), "pc:1", "grunt")
	if err != nil {
		t.Fatal(err)
	}
	// 71 vs 20: diff 51 → 10 + 5 = 15 damage ≥ 12 HP.
	if !out.Result.Hit || out.Result.Damage != 15 || out.HP != 0 || out.Down != StatusDead {
		t.Fatalf("outcome %+v", out)
	}
	kinds := []string{}
	for _, e := range evs {
		kinds = append(kinds, string(e.Kind))
	}
	if !reflect.DeepEqual(kinds, []string{"dice", "dice", "damage", "status"}) {
		t.Errorf("events %v", kinds)
	}
	if g := st.World.NPCs["grunt"]; g.HP != 0 || !HasStatus(g.Statuses, StatusDead) {
		t.Errorf("grunt %d HP %v", g.HP, g.Statuses)
	}
	// A PC at 0 HP falls unconscious, not dead.
	st.Party[1].HP = 3
	out, _, err = st.Attack(ScriptedDice(90, 1), "boss", "Brina")
	if err != nil {
		t.Fatal(err)
	}
	if out.Down != StatusUnconscious || st.Party[1].HP != 0 || !HasStatus(st.Party[1].Statuses, StatusUnconscious) {
		t.Errorf("Brina: %+v %v", out, st.Party[1].Statuses)
	}
}

func TestAttackRefusals(t *testing.T) {
	st := startedCombat(t)
	st.World.NPCs["grunt"].HP = 0
	st.World.NPCs["grunt"].Statuses = []string{StatusDead}
	cases := map[string]struct{ actor, target, code, mention string }{
		"dead target":   {"pc:1", "grunt", EINVALID, "Boss"},
		"unknown":       {"pc:1", "dragon", ENOTFOUND, "Boss"},
		"ally":          {"pc:1", "Brina", EINVALID, "ally"},
		"self":          {"pc:1", "Aldric", EINVALID, "itself"},
		"dead attacker": {"grunt", "Aldric", EINVALID, "cannot act"},
		"not in fight":  {"baker", "Aldric", ENOTFOUND, "not in this fight"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			before := st.Clone()
			_, _, err := st.Attack(NewDice(1), c.actor, c.target)
			if ErrorCode(err) != c.code || !strings.Contains(err.Error(), c.mention) {
				t.Fatalf("err = %v, want %s mentioning %q", err, c.code, c.mention)
			}
			if !reflect.DeepEqual(before.World.NPCs, st.World.NPCs) || !reflect.DeepEqual(before.Party, st.Party) {
				t.Error("a refused attack changed the state")
			}
		})
	}
	if _, _, err := newTestState(t).Attack(NewDice(1), "pc:1", "boss"); err == nil {
		t.Error("attack outside combat must be refused")
	}
}

func TestCheckEnd(t *testing.T) {
	kill := func(n *NPC) { n.HP = 0; n.Statuses = []string{StatusDead} }
	cases := map[string]struct {
		prep func(*State)
		want Outcome
	}{
		"fight goes on": {func(*State) {}, ""},
		"victory":       {func(s *State) { kill(s.World.NPCs["boss"]); kill(s.World.NPCs["grunt"]) }, OutcomePlayerWin},
		"foes fled": {func(s *State) {
			s.World.NPCs["boss"].Statuses = []string{StatusFled}
			s.World.NPCs["grunt"].Statuses = []string{StatusFled}
		}, OutcomeNPCFlee},
		"one dead one fled is a win": {func(s *State) {
			kill(s.World.NPCs["boss"])
			s.World.NPCs["grunt"].Statuses = []string{StatusFled}
		}, OutcomePlayerWin},
		"TPK": {func(s *State) {
			for _, c := range s.Party {
				c.HP, c.Statuses = 0, []string{StatusUnconscious}
			}
		}, OutcomePlayerDie},
		"party fled": {func(s *State) {
			for _, c := range s.Party {
				c.Statuses = []string{StatusFled}
			}
		}, OutcomePlayerFlee},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			st := startedCombat(t)
			c.prep(st)
			if got := st.CheckEnd(); got != c.want {
				t.Errorf("CheckEnd = %q, want %q", got, c.want)
			}
			ended, _ := st.AdvanceTurn(NewDice(1))
			if ended != (c.want != "") || st.Game.Combat.Ending != c.want {
				t.Errorf("AdvanceTurn ended=%v ending=%q", ended, st.Game.Combat.Ending)
			}
		})
	}
}

func TestEndCombatRewards(t *testing.T) {
	st := startedCombat(t)
	for _, id := range []string{"boss", "grunt"} {
		n := st.World.NPCs[id]
		n.HP, n.Statuses = 0, []string{StatusDead}
	}
	st.Party[1].HP, st.Party[1].Statuses = 0, []string{StatusUnconscious}
	st.AdvanceTurn(NewDice(1))
	if st.Game.Combat.Ending != OutcomePlayerWin {
		t.Fatalf("ending %q", st.Game.Combat.Ending)
	}
	goldBefore := st.Party[0].Gold
	// The model proposes another outcome; the engine's wins.
	res, evs, err := st.EndCombat(OutcomeForcedEnd, "done")
	if err != nil {
		t.Fatal(err)
	}
	// XP: boss level 2 → 100, grunt level 1 → 50. Gold 10 + 3. Only the
	// conscious Aldric shares them.
	if res.Outcome != OutcomePlayerWin || res.XP != 150 || res.Gold != 13 || !reflect.DeepEqual(res.Loot, []string{"Crown"}) {
		t.Errorf("result %+v", res)
	}
	a := st.Party[0]
	if a.XP != 150 || a.Level != 2 || a.Gold != goldBefore+13 || a.MaxHP != 40+8 {
		t.Errorf("Aldric xp %d level %d gold %d max hp %d", a.XP, a.Level, a.Gold, a.MaxHP)
	}
	if it := st.World.Items["crown-1"]; it.OwnerType != OwnerLocation || it.OwnerID != "den" {
		t.Errorf("loot at %s %s, want dropped in the den", it.OwnerType, it.OwnerID)
	}
	if st.Party[1].HP != 1 || HasStatus(st.Party[1].Statuses, StatusUnconscious) {
		t.Errorf("Brina should come round at 1 HP after a victory: %d %v", st.Party[1].HP, st.Party[1].Statuses)
	}
	if st.Game.Mode != ModeNarrative || st.Game.Combat != nil || st.Game.LastCombatResult == nil || !reflect.DeepEqual(st.Game.Queue, []EntryID{"pc:1", "pc:2"}) {
		t.Errorf("after end: mode %s combat %v queue %v", st.Game.Mode, st.Game.Combat, st.Game.Queue)
	}
	if last := evs[len(evs)-1]; last.Kind != "mode" {
		t.Errorf("last event %s, want mode", last.Kind)
	}
}

func TestEndCombatRefusesFalseVictory(t *testing.T) {
	st := startedCombat(t)
	if _, _, err := st.EndCombat(OutcomePlayerWin, ""); ErrorCode(err) != EINVALID || !strings.Contains(err.Error(), "Boss") {
		t.Errorf("err = %v, want a refusal naming the foes standing", err)
	}
	if st.Game.Combat == nil {
		t.Fatal("a refused end must leave the fight running")
	}
	res, _, err := st.EndCombat(OutcomeNPCFlee, "they surrender")
	if err != nil || res.Outcome != OutcomeNPCFlee || res.XP != 0 {
		t.Errorf("surrender: %+v %v", res, err)
	}
}

func TestTPKWakesPartyAtStart(t *testing.T) {
	st := startedCombat(t)
	for _, c := range st.Party {
		c.HP, c.Statuses = 0, []string{StatusUnconscious}
	}
	st.AdvanceTurn(NewDice(1))
	gold := st.Party[0].Gold
	res, _, err := st.EndCombat("", "")
	if err != nil || res.Outcome != OutcomePlayerDie {
		t.Fatalf("%+v %v", res, err)
	}
	for _, c := range st.Party {
		if c.HP != 1 || c.Location != "town" {
			t.Errorf("%s: %d HP at %s", c.Name, c.HP, c.Location)
		}
	}
	if st.Game.Location != "town" || st.Party[0].Gold != gold/2 {
		t.Errorf("party at %s with %d gold", st.Game.Location, st.Party[0].Gold)
	}
}

func TestJoinMidCombatGetsRolledPlace(t *testing.T) {
	st := startedCombat(t)
	st.AdvanceTurn(NewDice(1)) // boss acts now
	if _, err := st.AddCharacter(ScriptedDice(90), "c3", "3", "p3", NewCharacterSpec{Name: "Cato", Class: "warrior"}); err != nil {
		t.Fatal(err)
	}
	cb := st.Game.Combat
	if cb.Current().Entry != "dm:boss" {
		t.Errorf("current turn moved to %s", cb.Current().Entry)
	}
	if got := entries(cb); !reflect.DeepEqual(got, []string{"dm", "pc:3", "dm:boss", "pc:2", "pc:1", "dm:grunt"}) {
		t.Errorf("order %v", got)
	}
}

func TestCloneIsDeep(t *testing.T) {
	st := startedCombat(t)
	c := st.Clone()
	c.Party[0].HP = 1
	c.World.NPCs["boss"].Statuses = append(c.World.NPCs["boss"].Statuses, "x")
	c.Game.Combat.Order[1].Initiative = -1
	if st.Party[0].HP == 1 || len(st.World.NPCs["boss"].Statuses) != 0 || st.Game.Combat.Order[1].Initiative == -1 {
		t.Error("Clone shares memory with the original")
	}
	if c.Catalogue != st.Catalogue {
		t.Error("Clone must share the catalogue")
	}
}
