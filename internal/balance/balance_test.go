package balance_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"tavern/adventures"
	"tavern/internal/balance"
	"tavern/internal/engine"
)

func library(t *testing.T) *adventures.Library {
	t.Helper()
	lib, err := adventures.Load()
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

// TestBalanceSmoke is a small run of cmd/balance: 30 fights per mix of
// one and two level-1 characters at every built-in encounter. Two
// characters win the opening fight most of the time but not always on
// both rulesets (the full run, docs/balance.md, aims at 60–85 %; this
// one is too small to hold to the percent), and a lone one wins some.
func TestBalanceSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("plays 1,680 fights")
	}
	if raceBuild {
		t.Skip("make test runs it without -race")
	}
	rep, err := balance.Run(context.Background(), library(t), balance.Options{Fights: 30, Sizes: []int{1, 2}, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	var md strings.Builder
	rep.Markdown(&md)
	t.Log(md.String())
	mill := -1
	for i, e := range rep.Encounters {
		if e.Location == "mill" {
			mill = i
		}
	}
	if mill < 0 {
		t.Fatalf("no encounter at the mill among %v", rep.Encounters)
	}
	for e := range rep.Encounters {
		for size, cells := range rep.BySize(e) {
			for r, c := range cells {
				rate := c.Rate()
				if rate == 1 {
					t.Errorf("%s, %d PCs, %s: every fight won", rep.Encounters[e], size, rep.Rulesets[r])
				}
				if e == mill && size == 2 && (rate < 0.55 || rate > 0.9) {
					t.Errorf("the mill, 2 PCs, %s: %.0f %% won; want about 60–85 %%", rep.Rulesets[r], 100*rate)
				}
				if size == 1 && rate < 0.3 {
					t.Errorf("%s, a lone PC, %s: %.0f %% won", rep.Encounters[e], rep.Rulesets[r], 100*rate)
				}
			}
		}
	}
}

// The report is the same however many workers play it.
func TestBalanceIsDeterministic(t *testing.T) {
	lib := library(t)
	run := func(workers int) *balance.Report {
		rep, err := balance.Run(context.Background(), lib, balance.Options{Fights: 3, Sizes: []int{2}, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	a, b := run(1), run(3)
	if !reflect.DeepEqual(a.Cells, b.Cells) {
		t.Fatalf("cells differ:\n%v\n%v", a.Cells, b.Cells)
	}
}

// The bots use their abilities: a mage opens with sleep on a crowd, a
// hurt warrior catches a second wind, a cleric revives a fallen friend.
func TestBotsUseAbilities(t *testing.T) {
	lib := library(t)
	adv, _ := lib.Get(adventures.Default)
	st := engine.NewState(engine.Config{Ruleset: engine.RulesetD20}, adv, lib.Catalogue, 1)
	d := engine.NewDice(1)
	for i, class := range []string{"warrior", "mage", "cleric"} {
		seat := string(rune('1' + i))
		if _, err := st.AddCharacter(d, "c"+seat, seat, "p"+seat, engine.NewCharacterSpec{Name: []string{"Odo", "Sel", "Tam"}[i], Class: class}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, _, err := st.MoveParty(engine.NewDice(1), "", "mill"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.StartCombat(d, []string{"snikket"}); err != nil {
		t.Fatal(err)
	}
	odo, sel, tam := st.Party[0], st.Party[1], st.Party[2]
	if got := balance.BotWords(st, sel); !strings.Contains(got, "sleep") {
		t.Errorf("the mage says %q", got)
	}
	odo.HP = 1
	if got := balance.BotWords(st, odo); !strings.Contains(got, "second wind") {
		t.Errorf("the hurt warrior says %q", got)
	}
	odo.HP, odo.Statuses = 0, []string{engine.StatusUnconscious}
	if got := balance.BotWords(st, tam); got != "I revive Odo" {
		t.Errorf("the cleric says %q", got)
	}
}
