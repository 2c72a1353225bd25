package offline_test

import (
	"context"
	"testing"

	"tavern/adventures"
	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/offline"
	"tavern/internal/store"
)

// BenchmarkOfflineTurn is the agent side of one turn job: the runner and
// the offline narrator play one turn on a copy of a party of four's state
// with the history window the hub would give (the state copy itself is
// not timed; see engine's BenchmarkClone). The turns: a player's attack and
// a goblin's turn in the fight at the old mill, and a look around before
// it.
func BenchmarkOfflineTurn(b *testing.B) {
	s, look, attack, npc := playToTheFight(b)
	for _, bc := range []struct {
		name string
		turn *benchTurn
	}{{"combat-attack", attack}, {"combat-npc", npc}, {"narrative-look", look}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				tn := bc.turn.fresh()
				b.StartTimer()
				if _, err := s.r.Run(context.Background(), tn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTurnWindow is the history side of a turn job, as the hub does
// it around each turn: the window of an agent's active history (its last
// memories, then the recent turns sanitised and stripped of their state),
// and the extractive memory of the turns archived when it overflows.
func BenchmarkTurnWindow(b *testing.B) {
	s, _, _, _ := playToTheFight(b)
	var w agent.WindowConfig
	active := s.history[engine.AgentCombat]
	var mems []store.Memory
	for i := 0; i+10 <= len(active) && len(mems) < 3; i += 10 {
		mems = append(mems, agent.Summarize(context.Background(), nil, engine.AgentCombat, active[i:i+10], nil))
	}
	archive, _ := w.Split(active)
	if len(mems) < 3 || len(archive) == 0 {
		b.Fatalf("%d memories and %d messages to archive; want a history that overflows", len(mems), len(archive))
	}
	b.Run("context", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, keep := w.Split(active)
			w.Context(mems, keep, nil)
		}
	})
	b.Run("archive", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			agent.Summarize(context.Background(), nil, engine.AgentCombat, archive, nil)
		}
	})
}

// playToTheFight plays a party of four around the village to the old mill
// and into the fight there, keeping three turns to play again: a look
// around the mill, then, in the second round, a player's attack and a
// goblin's turn.
func playToTheFight(tb testing.TB) (g *benchGame, look, attack, npc *benchTurn) {
	tb.Helper()
	s := newBenchGame(tb)
	s.play(agent.TurnPlayer, s.st.Party[0], "I look around")
	s.play(agent.TurnPlayer, s.st.Party[1], "I go to the Crooked Lantern inn")
	s.play(agent.TurnPlayer, s.st.Party[2], "I ask Maren about the goblins and the lantern")
	s.play(agent.TurnPlayer, s.st.Party[3], "back to the square")
	s.play(agent.TurnPlayer, s.st.Party[0], "go to the old mill")
	look = s.snapshot(agent.TurnPlayer, s.st.Party[1], "I look around")
	s.play(agent.TurnPlayer, s.st.Party[0], "I attack Snikket!")
	for i := 0; attack == nil || npc == nil; i++ {
		cb := s.st.Game.Combat
		if i > 40 || cb == nil || cb.Ending != "" {
			tb.Fatal("the fight ended before both kinds of turn were seen")
		}
		switch cur := cb.Current(); {
		case cur.Kind == engine.KindBookend:
			s.play(agent.TurnBookend, nil, "")
		case cur.Kind == engine.KindNPC:
			if npc == nil && cb.Round > 1 {
				npc = s.snapshot(agent.TurnNPC, nil, "")
			}
			s.play(agent.TurnNPC, nil, "")
		default:
			pc := s.st.Character(cur.Ref)
			if attack == nil && cb.Round > 1 {
				attack = s.snapshot(agent.TurnPlayer, pc, "I strike at the nearest goblin")
			}
			s.play(agent.TurnPlayer, pc, "I strike at the nearest goblin")
		}
	}
	return s, look, attack, npc
}

// benchGame plays turns the way the hub does, keeping each agent's active
// history and giving each turn its window.
type benchGame struct {
	tb      testing.TB
	st      *engine.State
	dice    *engine.Dice
	r       *agent.Runner
	turn    int
	history map[string][]agent.Message
}

func newBenchGame(tb testing.TB) *benchGame {
	tb.Helper()
	lib, err := adventures.Load()
	if err != nil {
		tb.Fatal(err)
	}
	adv, _ := lib.Get(adventures.Default)
	st := engine.NewState(engine.Config{Ruleset: engine.RulesetD100, CombatMode: engine.CombatTactical}, adv, lib.Catalogue, 11)
	d := engine.NewDice(11)
	for i, class := range []string{"warrior", "rogue", "mage", "cleric"} {
		seat := string(rune('1' + i))
		if _, err := st.AddCharacter(d, "c"+seat, seat, "p"+seat, engine.NewCharacterSpec{Name: "Hero" + seat, Class: class}); err != nil {
			tb.Fatal(err)
		}
	}
	return &benchGame{tb: tb, st: st, dice: d, r: &agent.Runner{Narrative: offline.Narrator{}, Combat: offline.Narrator{}}, history: map[string][]agent.Message{}}
}

// next makes the next turn on the game's own state, with its window.
func (g *benchGame) next(kind string, actor *engine.Character, text string) *agent.Turn {
	g.turn++
	tn := &agent.Turn{No: g.turn, Kind: kind, State: g.st, Dice: g.dice, Actor: actor, Text: text, OnDelta: func(string) {}}
	if cb := g.st.Game.Combat; cb != nil {
		tn.Entry = cb.Current()
	}
	var w agent.WindowConfig
	_, keep := w.Split(g.history[tn.AgentName()])
	tn.History = w.Context(nil, keep, nil)
	return tn
}

func (g *benchGame) play(kind string, actor *engine.Character, text string) {
	g.tb.Helper()
	tn := g.next(kind, actor, text)
	res, err := g.r.Run(context.Background(), tn)
	if err != nil {
		g.tb.Fatalf("turn %d (%s %q): %v", tn.No, kind, text, err)
	}
	for _, m := range res.Messages {
		m.Turn = tn.No
		g.history[tn.AgentName()] = append(g.history[tn.AgentName()], m)
	}
	if g.st.Game.Combat != nil && res.Output.Tool != "start_combat" {
		g.st.AdvanceTurn(g.dice)
	}
}

// benchTurn is a turn to play again and again from the same state.
type benchTurn struct {
	turn  agent.Turn
	state *engine.State
	dice  engine.RNGState
}

// snapshot keeps the next turn, to be played from the game's state as it
// is now, without playing it.
func (g *benchGame) snapshot(kind string, actor *engine.Character, text string) *benchTurn {
	tn := g.next(kind, actor, text)
	g.turn--
	return &benchTurn{turn: *tn, state: g.st.Clone(), dice: g.dice.State()}
}

// fresh returns the turn on its own copy of the state and dice.
func (s *benchTurn) fresh() *agent.Turn {
	tn := s.turn
	tn.State = s.state.Clone()
	tn.Dice, _ = engine.RestoreDice(s.dice)
	if tn.Actor != nil {
		tn.Actor = tn.State.Character(tn.Actor.ID)
	}
	return &tn
}
