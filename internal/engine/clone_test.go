package engine_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"tavern/adventures"
	"tavern/internal/engine"
)

// fullState returns a Greyhollow state in a fight where every slice, map
// and pointer reachable from the State is non-empty, so that
// TestCloneIsDeepAndEqual reaches every field.
func fullState(tb testing.TB) *engine.State {
	tb.Helper()
	lib, err := adventures.Load()
	if err != nil {
		tb.Fatal(err)
	}
	adv, ok := lib.Get(adventures.Default)
	if !ok {
		tb.Fatalf("no adventure %q", adventures.Default)
	}
	st := engine.NewState(engine.Config{TurnTimeoutS: 90}, adv, lib.Catalogue, 42)
	d, err := engine.RestoreDice(st.RNG)
	if err != nil {
		tb.Fatal(err)
	}
	for _, c := range []struct{ id, seat, player, name, class string }{
		{"c1", "1", "p1", "Aldric", "warrior"},
		{"c2", "2", "p2", "Cora", "cleric"},
	} {
		if _, err := st.AddCharacter(d, c.id, c.seat, c.player, engine.NewCharacterSpec{Name: c.name, Class: c.class}); err != nil {
			tb.Fatal(err)
		}
	}
	if _, _, _, err := st.MoveParty(engine.NewDice(1), "", "mill"); err != nil {
		tb.Fatal(err)
	}
	if _, _, err := st.StartCombat(d, []string{"snikket"}); err != nil {
		tb.Fatal(err)
	}
	for _, c := range st.Party {
		c.Statuses = append(c.Statuses, engine.StatusDefending)
	}
	for _, n := range st.World.NPCs {
		n.Statuses = append(n.Statuses, engine.StatusOffBalance)
		if n.Lines == nil {
			n.Lines = map[string]string{"greet": "Well met."}
		}
		n.Abilities = []string{"second_wind"}
	}
	for _, it := range st.World.Items {
		it.Buffs, it.Flaws = []string{"glows"}, []string{"creaks"}
	}
	st.World.Relationships[engine.RelKey("c1", "maren")] = 15
	for _, l := range st.World.Locations {
		for i := range l.Exits {
			l.Exits[i].Trap = &engine.Trap{Stat: "agi", Difficulty: 40, DC: 12, Damage: "1d6"}
		}
	}
	for _, sh := range st.World.Shops {
		sh.Stock = append(sh.Stock, engine.StockEntry{Item: "bread", Price: 2, Count: 1})
	}
	cb := st.Game.Combat
	cb.Log = append(cb.Log, "Aldric steps forward.")
	cb.SavedQueue = append(cb.SavedQueue, "pc:9")
	cb.Effects = append(cb.Effects, engine.Effect{Name: "poison", Entry: "pc:1", Rounds: 2, Tick: "damage", Dice: "1d4"})
	cb.Engaged = map[engine.EntryID]engine.EntryID{"pc:1": "dm:snikket"}
	st.Game.Spent = map[string]map[string]int{"c:c1": {"second_wind": 1}}
	st.Game.NPCAbilities = map[string][]string{"snikket": {"second_wind"}}
	st.Game.Undead = []string{"snikket"}
	st.Game.LastRest = &engine.RestMark{Kind: engine.RestShort, Turn: 3}
	st.Game.Previous = "road"
	st.Game.Started = []string{"c1"}
	st.Game.Wielded = map[string]string{"c1:weapon": "c1-kit-1"}
	st.Game.LastCombatResult = &engine.CombatResult{CombatID: "x", Outcome: "victory", Loot: []string{"a"},
		Defeated: []string{"b"}, LevelUps: []string{"c1"}, Summary: "won",
		Shares: []engine.RewardShare{{Name: "Aldric", XP: 10, Gold: 2}}, Missed: []string{"Cora"}}
	st.RNG = d.State()
	return st
}

func TestCloneIsDeepAndEqual(t *testing.T) {
	st := fullState(t)
	before := mustJSON(t, st)
	c := st.Clone()
	if got := mustJSON(t, c); got != before {
		t.Fatalf("clone encodes differently:\n got %s\nwant %s", got, before)
	}
	if !reflect.DeepEqual(c, st) {
		t.Error("clone is not reflect.DeepEqual to the original")
	}
	if c.Catalogue != st.Catalogue {
		t.Error("Clone must share the catalogue")
	}
	// Change every value reachable from the copy (except the catalogue):
	// if any slice, map or pointer were shared, the original would change.
	var empty []string
	poison(reflect.ValueOf(c).Elem(), "State", &empty)
	for _, p := range empty {
		t.Errorf("fixture leaves %s empty: the test cannot check it is copied", p)
	}
	if mustJSON(t, c) == before {
		t.Fatal("poison changed nothing")
	}
	if got := mustJSON(t, st); got != before {
		t.Errorf("changing the clone changed the original:\n got %s\nwant %s", got, before)
	}
}

// poison changes every scalar reachable from v in place and adds a key to
// every map; it records in empty the paths of nil pointers and empty
// slices and maps, which it cannot reach through.
func poison(v reflect.Value, path string, empty *[]string) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			*empty = append(*empty, path)
			return
		}
		poison(v.Elem(), path, empty)
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.Type == reflect.TypeFor[*engine.Catalogue]() {
				continue // shared on purpose
			}
			poison(v.Field(i), path+"."+f.Name, empty)
		}
	case reflect.Slice:
		if v.Len() == 0 {
			*empty = append(*empty, path)
			return
		}
		for i := range v.Len() {
			poison(v.Index(i), fmt.Sprintf("%s[%d]", path, i), empty)
		}
	case reflect.Map:
		if v.Len() == 0 {
			*empty = append(*empty, path)
			return
		}
		for _, k := range v.MapKeys() {
			e := v.MapIndex(k)
			if e.Kind() == reflect.Pointer {
				poison(e, fmt.Sprintf("%s[%v]", path, k), empty)
				continue
			}
			n := reflect.New(e.Type()).Elem()
			n.Set(e)
			poison(n, fmt.Sprintf("%s[%v]", path, k), empty)
			v.SetMapIndex(k, n)
		}
		k := reflect.New(v.Type().Key()).Elem()
		poison(k, path+"[new key]", empty)
		v.SetMapIndex(k, reflect.Zero(v.Type().Elem()))
	case reflect.String:
		v.SetString(v.String() + "~")
	case reflect.Int, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint64, reflect.Uint8:
		v.SetUint(v.Uint() + 1)
	case reflect.Bool:
		v.SetBool(!v.Bool())
	default:
		panic("poison: unhandled kind " + v.Kind().String() + " at " + path)
	}
}

func mustJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// BenchmarkClone measures the copy a turn job gets of a fighting table.
func BenchmarkClone(b *testing.B) {
	st := fullState(b)
	for b.Loop() {
		_ = st.Clone()
	}
}
