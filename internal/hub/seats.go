package hub

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/coder/websocket"

	"tavern/internal/engine"
	"tavern/internal/store"
)

func (t *table) sit(ctx context.Context, p engine.Player, spec engine.NewCharacterSpec) (Character, error) {
	if _, ok := t.seatOf(p.ID); ok {
		return Character{}, engine.Errorf(engine.ECONFLICT, "You already have a seat at this table.")
	}
	if len(t.seats) >= t.meta.Seats {
		return Character{}, engine.Errorf(engine.ECONFLICT, "This table is full.")
	}
	taken := map[string]bool{}
	for _, s := range t.seats {
		taken[s.Seat] = true
	}
	seat := ""
	for i := 1; seat == ""; i++ {
		if !taken[strconv.Itoa(i)] {
			seat = strconv.Itoa(i)
		}
	}
	charID := newID("c")
	add := func(st *engine.State) (*engine.Character, []engine.Event, error) {
		d, err := engine.RestoreDice(st.RNG)
		if err != nil {
			return nil, nil, err
		}
		c, err := st.AddCharacter(d, charID, seat, p.ID, spec)
		if err != nil {
			return nil, nil, err
		}
		st.RNG = d.State()
		return c, engine.DiceEvents(d), nil
	}
	next := t.st.Clone()
	c, dice, err := add(next)
	if err != nil {
		return Character{}, err
	}
	s := engine.Seat{Seat: seat, PlayerID: p.ID, PlayerName: p.Name, CharacterID: c.ID, JoinedAt: t.h.cfg.Now().UTC()}
	evs := append([]engine.Event{engine.PlayerJoinedEvent(p, seat, roleLabel(rolePlayer), c)}, dice...)
	// Every character arrives in a session-start turn (its backstory, if
	// any, comes to life there), queued in the same transaction as the seat.
	commit := store.Commit{State: next, AddSeat: &s, Events: evs, AddPending: t.startAction(p, c)}
	if err := t.commit(ctx, commit, engine.TurnLabel(next.Game.Turn)); err != nil {
		return Character{}, fmt.Errorf("sit at %s: %w", t.id, err)
	}
	t.setState(next)
	t.seats = append(t.seats, s)
	t.acts.admitStart(*commit.AddPending)
	defer t.maybeStart()
	if t.job != nil {
		t.sinceJob = append(t.sinceJob, func(st *engine.State) {
			if st.Character(charID) == nil {
				_, _, _ = add(st)
			}
		})
	}
	t.updateSummary()
	t.log.Info("seat taken", "seat", seat, "player", p.ID, "character", c.Name)
	return characterView(t.st, c, t.playerNames()), nil
}

func (t *table) leave(ctx context.Context, p engine.Player) error {
	s, ok := t.seatOf(p.ID)
	if !ok {
		return engine.Errorf(engine.ENOTFOUND, "You have no seat at this table.")
	}
	return t.freeSeat(ctx, s, removal{code: websocket.StatusNormalClosure, reason: "you left the table"})
}

// removal is how a seat is freed: by whom (player_left's "by": ByOwner,
// ByOperator, or "" when the player left), what commits with it (the
// operator's audit line, the ban it carries), how the player's sockets
// close, and what to apply once it is durable.
type removal struct {
	by       string
	audit    []engine.Event
	settings *store.SettingsChange
	code     websocket.StatusCode
	reason   string
	// applied runs once the commit succeeded, before anyone is told.
	applied func()
}

// freeSeat removes seat s and its character, drops the player's waiting
// actions and closes the player's sockets, in ONE commit with the
// player_left event and what r carries: a kick's audit line and its ban
// land together or not at all (store.SettingsChange).
func (t *table) freeSeat(ctx context.Context, s engine.Seat, r removal) error {
	p := engine.Player{ID: s.PlayerID, Name: s.PlayerName}
	left := engine.PlayerLeftEvent(p, s.Seat, roleLabel(rolePlayer))
	if r.by != "" {
		left = engine.PlayerRemovedEvent(p, s.Seat, roleLabel(rolePlayer), r.by)
	}
	next := t.st.Clone()
	wasCurrent := next.Game.Combat != nil && next.Game.Combat.Current().Entry == engine.PCEntry(s.Seat)
	next.RemoveCharacter(s.Seat)
	evs := append(slices.Clip(r.audit), left)
	running := ""
	if t.job != nil && t.job.action != nil {
		running = t.job.action.ID
	}
	drop := t.acts.ofPlayer(p.ID, running)
	if wasCurrent && t.job == nil {
		if d, err := engine.RestoreDice(next.RNG); err == nil {
			_, tev := next.AdvanceTurn(d)
			next.RNG = d.State()
			evs = append(evs, engine.DiceEvents(d)...)
			evs = append(evs, tev...)
			evs = append(evs, turnEvent(next))
		}
	}
	c := store.Commit{State: next, RemoveSeat: s.Seat, Events: evs, Abandon: drop, Settings: r.settings}
	if err := t.commit(ctx, c, engine.TurnLabel(next.Game.Turn)); err != nil {
		return fmt.Errorf("leave %s: %w", t.id, err)
	}
	if r.applied != nil {
		r.applied()
	}
	t.setState(next)
	t.seats = deleteSeat(t.seats, s.Seat)
	t.acts.forget(drop)
	if t.job != nil {
		t.sinceJob = append(t.sinceJob, func(st *engine.State) { st.RemoveCharacter(s.Seat) })
	}
	for c := range t.clients {
		if c.player != nil && c.player.ID == p.ID && c.role == rolePlayer {
			c.close(r.code, r.reason)
		}
	}
	t.updateSummary()
	t.maybeStart()
	return nil
}

func deleteSeat(seats []engine.Seat, seat string) []engine.Seat {
	out := seats[:0:0]
	for _, s := range seats {
		if s.Seat != seat {
			out = append(out, s)
		}
	}
	return out
}
