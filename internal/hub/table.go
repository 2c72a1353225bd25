package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/store"
)

const (
	inboxSize    = 256
	recentEvents = 50
	// replayLimit is the most events replayed to a reconnecting client;
	// further behind, it gets a fresh snapshot instead.
	replayLimit = 500
	maxAttempts = 3
)

// table is one table's actor. Every field below inbox is owned by the
// table goroutine (loop) and touched only from commands it runs.
type table struct {
	h       *Hub
	id      string
	log     *slog.Logger
	inbox   chan func()
	summary atomic.Pointer[TableSummary]
	// idleMu guards idle: nil while no turn job runs, otherwise a channel
	// closed when it ends (markBusy, markIdle, waitIdle).
	idleMu sync.Mutex
	idle   chan struct{}

	meta engine.Table
	// st is the state with every commit queued applied; shown, the state
	// clients see: as of the last published commit (pipeline.go).
	st, shown *engine.State
	// seq is the seq of the last published event; numbered, of the last
	// event numbered, committed or in flight.
	seq, numbered int64
	// inflight are the commits queued with the store and not yet settled,
	// oldest first; the store signals answered as it answers each. chain
	// links them (store.Commit.Chain).
	inflight []*inflight
	answered chan struct{}
	chain    uint64
	// recentActs are the last closed actions of each player, newest
	// first, by player id: a resent act is answered from them.
	recentActs map[string][]store.ClosedAct
	seats      []engine.Seat
	clients    map[*client]struct{}
	subs       map[*sub]struct{}
	recent     []engine.Event
	pending    []engine.PendingAction
	// tried counts failed attempts per pending action id.
	tried map[string]int
	job   *job
	// sinceJob replays seat changes made while a job ran onto its result.
	sinceJob []func(st *engine.State)
	// hold delays the next turn after a failure (backoff); holdGen tells
	// the latest hold's alarm from older ones (holdFor).
	hold    time.Time
	holdGen int
	// timer resolves an absent player's tactical turn (timer.go).
	timer    *alarm
	timerKey string
	deadline time.Time
	// statePending: a state frame is queued (client.go, stateChanged).
	statePending bool

	// The operator's side (admin.go, moderation.go). paused: no turn
	// runs and act is refused; closed: gone from the lobby, read-only.
	paused, closed bool
	// life is where each open pending action is in its life, by id.
	life map[string]*store.ActionLife
	// abandoned holds actions the operator abandoned while their turn
	// ran: that turn's result is dropped, never applied.
	abandoned  map[string]bool
	lastTurnAt time.Time
	lastError  string
	// admin is what the metrics read without calling into the table.
	admin atomic.Pointer[adminCounts]
	// lastUse is when the table was last got or committed (unix ns), for
	// eviction; evicted is set by evict, after which the loop closes gone
	// and ends (evict.go).
	lastUse atomic.Int64
	evicted bool
	gone    chan struct{}
	// hist is the agents' live history window (memory.go); it has its own
	// lock, shared with the turn job.
	hist historyCache
}

// adminCounts are a table's counters published for the metrics.
type adminCounts struct {
	Paused, Closed, Busy bool
	Players, Spectators  int
}

type sub struct{ ch chan engine.Event }

func (h *Hub) newTable(d store.TableData) *table {
	t := &table{
		h: h, id: d.Table.ID, log: h.log.With("table", d.Table.ID), inbox: make(chan func(), inboxSize), gone: make(chan struct{}),
		meta: d.Table, st: d.State, shown: d.State, seq: d.Seq, numbered: d.Seq, seats: d.Seats, clients: map[*client]struct{}{},
		answered: make(chan struct{}, 1), chain: h.chains.Add(1), recentActs: map[string][]store.ClosedAct{},
		subs: map[*sub]struct{}{}, pending: d.Pending, tried: map[string]int{},
		life: map[string]*store.ActionLife{}, abandoned: map[string]bool{}, lastTurnAt: d.LastTurnAt,
	}
	for _, a := range d.RecentActs {
		t.recentActs[a.PlayerID] = append(t.recentActs[a.PlayerID], a)
	}
	for _, a := range d.Pending {
		t.life[a.ID] = &store.ActionLife{ActionID: a.ID, State: store.ActionPending}
	}
	if recent, err := h.cfg.Store.Events(context.Background(), t.id, max(0, d.Seq-recentEvents), recentEvents); err == nil {
		t.recent = recent
	}
	t.updateSummary()
	return t
}

func (t *table) start() {
	if t.h.spawn(t.loop) {
		t.post(t.maybeStart)
	}
}

func (t *table) loop() {
	for {
		select {
		case <-t.h.ctx.Done():
			t.drain()
			for c := range t.clients {
				c.close(1001, "server shutting down")
			}
			for s := range t.subs {
				close(s.ch)
				delete(t.subs, s)
			}
			return
		case f := <-t.inbox:
			f()
		case <-t.answered:
			t.settle()
		}
		if t.evicted {
			close(t.gone)
			return
		}
	}
}

// post queues f on the table goroutine; it blocks while the inbox is full
// and gives up when the hub closes.
func (t *table) post(f func()) bool {
	select {
	case t.inbox <- f:
		return true
	case <-t.h.ctx.Done():
		return false
	case <-t.gone:
		return false
	}
}

// tryPost queues f unless the inbox is full (for droppable work such as
// narration deltas) and reports whether it did.
func (t *table) tryPost(f func()) bool {
	select {
	case t.inbox <- f:
		return true
	default:
		return false
	}
}

// What call answers when the hub closes, or when the table was evicted
// under the caller (evict.go: only after evictAfter without any get, so
// all but impossible): the client tries again and loads it afresh. Made
// once: every frame a player sends may need them (client.handle).
var (
	errShuttingDown = engine.Errorf(engine.EUNAVAILABLE, "The server is shutting down.")
	errEvicted      = engine.Errorf(engine.EUNAVAILABLE, "The table was unloaded; try again.")
)

// call runs f on the table goroutine and waits for its result, which it
// gets only once the commits queued by then are durable (afterSettled): an
// answer never rests on what the store does not hold yet. An error
// from call means f did not and never will run, or ran and failed: a
// command that was queued when ctx ended or the hub closed is cancelled
// (f is skipped when its turn comes), and once f has started call waits
// for its answer. Shutdown once answered `error unavailable` to an act
// that was then still committed (issue 11).
func (t *table) call(ctx context.Context, f func() error) error {
	const queued, running, cancelled = 0, 1, 2
	var state atomic.Int32
	done := make(chan error, 1)
	cmd := func() {
		if !state.CompareAndSwap(queued, running) {
			return
		}
		err := f()
		t.afterSettled(func(unsaved error) {
			if err == nil {
				err = unsaved
			}
			done <- err
		})
	}
	select {
	case t.inbox <- cmd:
	case <-ctx.Done():
		return ctx.Err()
	case <-t.h.ctx.Done():
		return errShuttingDown
	case <-t.gone:
		return errEvicted
	}
	var giveUp error
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		giveUp = ctx.Err()
	case <-t.h.ctx.Done():
		giveUp = errShuttingDown
	case <-t.gone:
		giveUp = errEvicted
	}
	if state.CompareAndSwap(queued, cancelled) {
		return giveUp
	}
	// f is running (or ran): its answer is the truth. The table loop
	// finishes the command it started even while the hub closes.
	return <-done
}

// markBusy records that a turn job starts, for waitIdle. It refuses (and
// records nothing) once the hub is closing: checked under idleMu, so Close,
// which sets closed before it reads idle, either sees this job or stops it
// from starting.
func (t *table) markBusy() bool {
	t.idleMu.Lock()
	defer t.idleMu.Unlock()
	if t.h.closed.Load() {
		return false
	}
	if t.idle == nil {
		t.idle = make(chan struct{})
	}
	return true
}

// markIdle records that the turn job ended and wakes waitIdle.
func (t *table) markIdle() {
	t.idleMu.Lock()
	defer t.idleMu.Unlock()
	if t.idle != nil {
		close(t.idle)
		t.idle = nil
	}
}

// waitIdle waits until no turn job runs, or until expired fires; it
// reports whether the table is idle. Safe to call from any goroutine.
func (t *table) waitIdle(expired <-chan time.Time) bool {
	t.idleMu.Lock()
	idle := t.idle
	t.idleMu.Unlock()
	if idle == nil {
		return true
	}
	select {
	case <-idle:
		return true
	case <-expired:
		return false
	}
}

func (t *table) updateSummary() {
	spect, players := 0, 0
	for c := range t.clients {
		if c.role == roleSpectator {
			spect++
		} else {
			players++
		}
	}
	t.admin.Store(&adminCounts{Paused: t.paused, Closed: t.closed, Busy: t.job != nil, Players: players, Spectators: spect})
	s := t.h.summaryOf(t.meta, t.st.Game.Mode, len(t.seats), spect)
	t.summary.Store(&s)
}

// summaryOf is the lobby's summary of a table: the live one of a loaded
// table, and the one read from the store (TableInfos) of the others.
func (h *Hub) summaryOf(meta engine.Table, mode string, seated, spectators int) TableSummary {
	status := "open"
	if seated >= meta.Seats {
		status = "full"
	}
	name := meta.Adventure
	if a, ok := h.cfg.Adventures.Get(meta.Adventure); ok {
		name = a.Name
	}
	return TableSummary{
		ID: meta.ID, Name: meta.Name, Adventure: meta.Adventure, AdventureName: name, Ruleset: meta.Config.Ruleset,
		CombatMode: meta.Config.CombatMode, Mode: mode, Seats: meta.Seats, Seated: seated,
		Spectators: spectators, Status: status, TurnTimeoutS: meta.Config.TurnTimeoutS,
	}
}

func (t *table) playerNames() map[string]string {
	m := map[string]string{}
	for _, s := range t.seats {
		m[s.PlayerID] = s.PlayerName
	}
	return m
}

func (t *table) snapshot() Snapshot {
	st := t.shown
	names := t.playerNames()
	party := make([]Character, 0, len(st.Party))
	for _, c := range st.Party {
		party = append(party, characterView(st, c, names))
	}
	s := Snapshot{
		Table: *t.summary.Load(), Seq: t.seq, Mode: st.Game.Mode, Location: locationView(st), Party: party,
		NPCs: npcViews(st), Combat: initiativeView(st), Recent: nonNil(append([]engine.Event(nil), t.recent...)),
		DM: t.h.cfg.DM, Busy: t.job != nil, Queue: nonNil(st.Game.Queue), AdventureID: t.meta.Adventure,
		Quests: questViews(st), Followers: followers(st), Pending: t.pendingViews(false), Paused: t.paused,
	}
	s.Online = onlineSeats(t.clients) // issue 13: who is connected (views.go)
	if st.Game.LastCombatResult != nil {
		s.LastCombat = st.Game.LastCombatResult
	}
	if s.Combat != nil && !t.deadline.IsZero() {
		s.Combat.Deadline = t.deadline.UTC().Format(time.RFC3339)
	}
	return s
}

func (t *table) seatOf(playerID string) (engine.Seat, bool) {
	for _, s := range t.seats {
		if s.PlayerID == playerID {
			return s, true
		}
	}
	return engine.Seat{}, false
}

// ---- events ----

// number stamps events with seq, time and turn. The caller commits them
// and then calls publish; if the commit fails it calls unnumber.
func (t *table) number(evs []engine.Event, turn string) {
	now := t.h.cfg.Now().UTC()
	for i := range evs {
		t.numbered++
		evs[i].Seq, evs[i].TS = t.numbered, now
		if evs[i].Turn == "" {
			evs[i].Turn = turn
		}
		if evs[i].Data == nil {
			evs[i].Data = engine.RawData("{}")
		}
	}
}

func (t *table) unnumber(evs []engine.Event) { t.numbered -= int64(len(evs)) }

// publish queues committed events to every client (held: pushHeld sends
// them) and sends them to every subscriber, and a state frame to the
// clients that asked for one when an event changed more than the log
// (every kind but chat).
// data is the JSON of each event's data (eventData).
func (t *table) publish(evs []engine.Event, data []json.RawMessage) {
	changed := false
	for i, e := range evs {
		changed = changed || e.Kind != engine.EventChat
		t.recent = append(t.recent, e)
		t.seq = e.Seq
		frame := eventFrameOf(e, data[i])
		for c := range t.clients {
			c.hold(frame)
		}
		for s := range t.subs {
			select {
			case s.ch <- e:
			default:
				close(s.ch)
				delete(t.subs, s)
			}
		}
	}
	t.h.metrics.published(len(evs), len(t.clients), len(t.subs))
	if changed {
		t.stateChanged()
	}
	// Dropped from the front, their data let go: the next append that
	// finds no room copies the last recentEvents once, instead of every
	// publish copying them (each chat line, issue 12).
	if over := len(t.recent) - recentEvents; over > 0 {
		clear(t.recent[:over])
		t.recent = t.recent[over:]
	}
}

// pushHeld writes the frames publish held, each client's in one write
// when its socket takes them at once (client.push).
func (t *table) pushHeld() {
	for c := range t.clients {
		c.push()
	}
}

func (t *table) unsubscribe(s *sub) {
	if _, ok := t.subs[s]; ok {
		delete(t.subs, s)
		close(s.ch)
	}
}

// ---- seats ----

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
	if err := t.commit(ctx, commit, fmt.Sprintf("t%d", next.Game.Turn)); err != nil {
		return Character{}, fmt.Errorf("sit at %s: %w", t.id, err)
	}
	t.setState(next)
	t.seats = append(t.seats, s)
	t.pending = append(t.pending, *commit.AddPending)
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
	return t.freeSeat(ctx, s, p, nil, websocket.StatusNormalClosure, "you left the table")
}

// freeSeat removes seat s (player p) and its character, drops the
// player's waiting actions and closes the player's sockets with code and
// reason; extra events (the operator's audit) are committed with it.
func (t *table) freeSeat(ctx context.Context, s engine.Seat, p engine.Player, extra []engine.Event, code websocket.StatusCode, reason string) error {
	next := t.st.Clone()
	wasCurrent := next.Game.Combat != nil && next.Game.Combat.Current().Entry == engine.PCEntry(s.Seat)
	next.RemoveCharacter(s.Seat)
	evs := append(extra, engine.PlayerLeftEvent(p, s.Seat, roleLabel(rolePlayer)))
	var drop []string
	for _, a := range t.pending {
		if a.PlayerID == p.ID && (t.job == nil || t.job.action == nil || t.job.action.ID != a.ID) {
			drop = append(drop, a.ID)
		}
	}
	if wasCurrent && t.job == nil {
		if d, err := engine.RestoreDice(next.RNG); err == nil {
			_, tev := next.AdvanceTurn(d)
			next.RNG = d.State()
			evs = append(evs, engine.DiceEvents(d)...)
			evs = append(evs, tev...)
			evs = append(evs, turnEvent(next))
		}
	}
	if err := t.commit(ctx, store.Commit{State: next, RemoveSeat: s.Seat, Events: evs, Abandon: drop}, fmt.Sprintf("t%d", next.Game.Turn)); err != nil {
		return fmt.Errorf("leave %s: %w", t.id, err)
	}
	t.setState(next)
	t.seats = deleteSeat(t.seats, s.Seat)
	t.pending = filterPending(t.pending, drop)
	for _, id := range drop {
		delete(t.life, id)
	}
	if t.job != nil {
		t.sinceJob = append(t.sinceJob, func(st *engine.State) { st.RemoveCharacter(s.Seat) })
	}
	for c := range t.clients {
		if c.player != nil && c.player.ID == p.ID && c.role == rolePlayer {
			c.close(code, reason)
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

func filterPending(p []engine.PendingAction, drop []string) []engine.PendingAction {
	out := p[:0:0]
outer:
	for _, a := range p {
		for _, d := range drop {
			if a.ID == d {
				continue outer
			}
		}
		out = append(out, a)
	}
	return out
}

// ---- actions ----

// act handles a player's `act` frame: answer gets the ack status or an
// error code and message, on the table goroutine, once the action is
// durable (pipeline.go) or at once when no commit is needed.
//
// Its answers are true (issue 11): the same act sent again is acked again,
// also once it was applied (answerRetry), and the one the DM gave up on is
// played again; a new act while the DM has given up on the player's
// previous one replaces it: that one is abandoned, in the same commit, with
// a `system` event naming it, and the new one is played.
func (t *table) act(ctx context.Context, c *client, clientID, text string, answer func(status string, err error)) {
	status, commit, err := t.admitAct(c, clientID, text)
	if err != nil || commit == nil {
		// No commit of its own: the answer (a refusal, or the ack of an
		// act sent again) rests on the table's state, which runs ahead of
		// the store by the commits in flight, so it leaves once they
		// settle; if they fail, the table restarts and that is the answer.
		t.afterSettled(func(unsaved error) {
			if unsaved != nil {
				status, err = "", unsaved
			}
			answer(status, err)
		})
		return
	}
	a := *commit.AddPending
	status = "queued"
	if t.job == nil {
		status = "accepted"
	}
	_, err = t.queue(ctx, *commit, fmt.Sprintf("t%d", t.st.Game.Turn+1), func(err error) {
		if engine.ErrorCode(err) == engine.ECONFLICT {
			err = refusal{err} // already stored (and maybe played) long ago
		}
		answer(status, err)
	})
	if err != nil {
		answer("", err)
		return
	}
	// The table goes on as if the commit had landed: if it fails, the
	// table restarts (pipeline.go).
	for _, id := range commit.Abandon {
		t.drop(id, store.ActionAbandoned)
	}
	t.pending = append(t.pending, a)
	t.life[a.ID] = &store.ActionLife{ActionID: a.ID, State: store.ActionPending}
	t.maybeStart()
}

// admitAct checks a player's act against the table: it returns the commit
// that stores it, or the answer to give without one (a status, or an
// error: a refusal the caller may look up, answerRetry).
func (t *table) admitAct(c *client, clientID, text string) (string, *store.Commit, error) {
	refuse := func(err error) (string, *store.Commit, error) { return "", nil, refusal{err} }
	if t.paused || t.closed {
		return refuse(protoErr(CodeUnavailable, "The operator has paused this table; actions wait until it resumes."))
	}
	s, ok := t.seatOf(c.player.ID)
	if !ok {
		return refuse(protoErr(CodeNotSeated, "You have no seat at this table."))
	}
	for _, a := range t.pending {
		if a.PlayerID == c.player.ID && a.ClientID == clientID {
			if t.gaveUp(a.ID) {
				// The same act again: the DM tries it once more.
				t.tried[a.ID] = 0
				t.setLife(a.ID, store.ActionPending, "")
				t.maybeStart()
			}
			return t.ackStatus(a), nil, nil // a retried act is not applied twice
		}
	}
	if done, ok := t.recentAct(c.player.ID, clientID); ok {
		status, err := answerClosed(done.State)
		return status, nil, err
	}
	var stale *engine.PendingAction
	for i := range t.pending {
		// A session start is the DM's to play (after a fight, if one is
		// on): it does not take the player's queue slot.
		if a := &t.pending[i]; a.PlayerID == c.player.ID && a.Kind != engine.ActionStart {
			if !t.gaveUp(a.ID) {
				return refuse(protoErr(CodeBusy, "Your previous action is still waiting to be resolved."))
			}
			stale = a
		}
	}
	ch := t.st.CharacterBySeat(s.Seat)
	if ch == nil {
		return refuse(protoErr(CodeNotSeated, "Your character has left the table."))
	}
	if !ch.Conscious() {
		return refuse(protoErr(CodeDead, ch.Name+" is unconscious and cannot act."))
	}
	if cb := t.st.Game.Combat; cb != nil && t.meta.Config.CombatMode == engine.CombatTactical {
		cur := cb.Current()
		if cur.Entry != engine.PCEntry(s.Seat) || cb.Ending != "" {
			return refuse(protoErr(CodeNotYourTurn, fmt.Sprintf("It is %s's turn.", cur.Name)))
		}
	}
	a := engine.PendingAction{ID: newID("a"), PlayerID: c.player.ID, CharacterID: ch.ID, Seat: s.Seat, ClientID: clientID,
		Text: text, Status: engine.ActionPending, CreatedAt: t.h.cfg.Now().UTC()}
	commit := store.Commit{AddPending: &a}
	if stale != nil {
		commit.Abandon = []string{stale.ID}
		commit.Events = append(commit.Events, abandonedEvent(*stale, "replaced by "+ch.Name+"'s new action"))
	}
	commit.Events = append(commit.Events, engine.ActionEvent(a, ch.Name))
	return "", &commit, nil
}

// refusal is act's answer to an act it refuses with err. The act may be
// one the player sent before, so the caller looks it up (answerRetry) off
// the table goroutine: a refused act costs the table no disk read.
type refusal struct{ err error }

func (r refusal) Error() string { return r.err.Error() }
func (r refusal) Unwrap() error { return r.err }

// answerRetry answers an act that is refused with err, or whose client id
// is taken: if the player already sent this very act, the answer is about
// that one (answerClosed). Otherwise err stands. Safe off the table
// goroutine.
func (t *table) answerRetry(ctx context.Context, playerID, clientID string, err error) (string, error) {
	l, found, lerr := t.h.cfg.Store.ActionByClientID(ctx, t.id, playerID, clientID)
	if lerr != nil {
		t.log.Warn("look up a retried act", "player", playerID, "err", lerr)
		return "", err
	}
	if !found {
		return "", err
	}
	return answerClosed(l.State)
}

// answerClosed answers an act sent again, by how the action it names is:
// applied, or still waiting: acked again, so a client that lost its ack
// learns its action happened (or will); abandoned: refused with code
// abandoned.
func answerClosed(state string) (string, error) {
	switch state {
	case store.ActionAbandoned:
		return "", protoErr(CodeAbandoned, "This action was abandoned without being played.")
	case store.ActionResolved:
		return "accepted", nil
	default:
		return "queued", nil
	}
}

// gaveUp reports whether the DM gave up on the open action id after its
// attempts: it waits for its player (or the turn timer).
func (t *table) gaveUp(id string) bool { return t.tried[id] >= maxAttempts }

// drop forgets an open action closed by a commit, resolved or abandoned
// (state), and remembers how it ended for a resent act (recentActs).
func (t *table) drop(id, state string) {
	for _, a := range t.pending {
		if a.ID == id {
			closed := append([]store.ClosedAct{{PlayerID: a.PlayerID, ClientID: a.ClientID, State: state}}, t.recentActs[a.PlayerID]...)
			t.recentActs[a.PlayerID] = closed[:min(len(closed), store.RecentActsPerPlayer)]
		}
	}
	t.pending = filterPending(t.pending, []string{id})
	delete(t.tried, id)
	delete(t.life, id)
}

// recentAct returns how the player's closed action sent under clientID
// ended, if it is among their last ones.
func (t *table) recentAct(playerID, clientID string) (store.ClosedAct, bool) {
	for _, a := range t.recentActs[playerID] {
		if a.ClientID == clientID {
			return a, true
		}
	}
	return store.ClosedAct{}, false
}

// CodeAbandoned is the code of the `system` event that tells a player
// their action was dropped without being played, and of the error that
// answers a retry of it.
const CodeAbandoned = "abandoned"

// abandonedEvent tells the table that action a is abandoned, and why.
func abandonedEvent(a engine.PendingAction, why string) engine.Event {
	text := a.Text
	if r := []rune(text); len(r) > 80 {
		text = string(r[:80]) + "…"
	}
	return engine.NewEvent(engine.SystemData{Code: CodeAbandoned, Message: fmt.Sprintf("The action %q was abandoned without being played: %s.", text, why),
		ActionID: a.ID, PlayerID: a.PlayerID})
}

func (t *table) ackStatus(a engine.PendingAction) string {
	if t.job != nil && t.job.action != nil && t.job.action.ID == a.ID {
		return "accepted"
	}
	return "queued"
}

// say handles a player's `say` frame: answer gets "accepted" once the line
// is durable, or the error.
func (t *table) say(ctx context.Context, c *client, text string, answer func(status string, err error)) {
	ev := engine.ChatEvent(*c.player, text)
	_, err := t.queue(ctx, store.Commit{Events: []engine.Event{ev}}, "", func(err error) { answer("accepted", err) })
	if err != nil {
		answer("", err)
	}
}

// ---- turns ----

// job is one turn running outside the table goroutine.
type job struct {
	kind   string
	action *engine.PendingAction
	entry  engine.Combatant
	state  *engine.State
	turnNo int
	// started is when the job started: the turn's duration.
	started time.Time
	// archive is the memory the turn archives, made by the job
	// (archiveAfter) and committed with the turn.
	archive *store.Memory
}

// nextTurn decides what plays next, if anything: the forced resolution,
// the DM's bookend or NPC turns, the active PC's action in tactical combat,
// or the oldest queued action.
func (t *table) nextTurn() *job {
	st := t.st
	ready := func(a engine.PendingAction) bool { return t.tried[a.ID] < maxAttempts }
	if cb := st.Game.Combat; cb != nil {
		if cb.Ending != "" {
			return &job{kind: agent.TurnResolution, entry: engine.Combatant{Entry: engine.BookendEntry, Kind: engine.KindBookend, Name: "DM"}}
		}
		if t.meta.Config.CombatMode == engine.CombatNarrative {
			// No initiative queue: actions in arrival order, no DM turns.
			for i := range t.pending {
				if ready(t.pending[i]) && t.pending[i].Kind != engine.ActionStart {
					return &job{kind: agent.TurnPlayer, action: &t.pending[i]}
				}
			}
			return nil
		}
		cur := cb.Current()
		switch cur.Kind {
		case engine.KindBookend:
			return &job{kind: agent.TurnBookend, entry: cur}
		case engine.KindNPC:
			return &job{kind: agent.TurnNPC, entry: cur}
		}
		for i := range t.pending {
			a := &t.pending[i]
			if !ready(*a) || a.Kind == engine.ActionStart {
				continue // session starts wait for the fight to end
			}
			if t.meta.Config.CombatMode == engine.CombatTactical && engine.PCEntry(a.Seat) != cur.Entry {
				continue
			}
			return &job{kind: agent.TurnPlayer, action: a, entry: cur}
		}
		return nil
	}
	for i := range t.pending {
		if ready(t.pending[i]) {
			return &job{kind: agent.TurnPlayer, action: &t.pending[i]}
		}
	}
	return nil
}

func (t *table) maybeStart() {
	defer t.armTimer()
	if t.job != nil || t.evicted || t.paused || t.closed || t.h.ctx.Err() != nil || t.h.closed.Load() || t.h.cfg.Now().Before(t.hold) {
		return
	}
	j := t.nextTurn()
	if j == nil || !t.markBusy() {
		return
	}
	if j.action != nil {
		a := *j.action
		j.action = &a
	}
	j.state = t.st.Clone()
	j.turnNo = t.st.Game.Turn + 1
	j.started = t.h.cfg.Now()
	if j.action != nil {
		t.setLife(j.action.ID, store.ActionRunning, "")
	}
	t.job = j
	t.sinceJob = nil
	t.updateSummary()
	if !t.h.spawn(func() {
		res, st, err := t.runJob(j)
		t.post(func() { t.finish(j, res, st, err) })
	}) {
		t.job = nil // closing: the action stays pending for the restart
		t.markIdle()
	}
}

// runJob plays one turn on the job's state copy. It never touches the
// table's fields.
func (t *table) runJob(j *job) (agent.Result, *engine.State, error) {
	ctx := t.h.ctx
	st := j.state
	st.Game.Turn = j.turnNo
	dice, err := engine.RestoreDice(st.RNG)
	if err != nil {
		return agent.Result{}, nil, err
	}
	turn := &agent.Turn{No: j.turnNo, Kind: j.kind, State: st, Dice: dice, Entry: j.entry}
	if a, ok := t.h.cfg.Adventures.Get(t.meta.Adventure); ok {
		turn.Adventure = a.Name + "\n" + a.Intro
	}
	if j.action != nil {
		turn.Actor = st.Character(j.action.CharacterID)
		turn.Text = j.action.Text
		turn.ActionID = j.action.ID
		if turn.Actor == nil {
			return agent.Result{}, nil, engine.Errorf(engine.EINVALID, "The acting character has left.")
		}
		if j.action.Kind == engine.ActionStart {
			turn.Kind = agent.TurnStart
			st.Game.Started = append(st.Game.Started, turn.Actor.ID)
		}
		if st.Game.Combat != nil {
			if e, ok := st.Game.Combat.Entry(engine.PCEntry(turn.Actor.Seat)); ok {
				turn.Entry = e
			}
		}
	}
	ctx = agent.WithTable(ctx, t.id) // for the memory tools and the call log
	ctx = agent.WithTurn(ctx, fmt.Sprintf("t%d", j.turnNo))
	hist, err := t.historyContext(ctx, turn.AgentName())
	if err != nil {
		return agent.Result{}, nil, fmt.Errorf("load history: %w", err)
	}
	turn.History = hist
	turn.OnDelta = t.newDeltaStream(fmt.Sprintf("t%d", j.turnNo)).add
	res, err := t.h.cfg.Runner.Run(ctx, turn)
	if err != nil {
		return agent.Result{}, nil, err
	}
	// The engine, not the model, advances the initiative.
	narrativeCombat := t.meta.Config.CombatMode == engine.CombatNarrative
	if st.Game.Combat != nil {
		if res.Output.Tool == "start_combat" {
			if !narrativeCombat {
				res.Events = append(res.Events, turnEvent(st))
			}
		} else {
			var evs []engine.Event
			if t.meta.Config.CombatMode == engine.CombatNarrative && st.Game.Combat.Ending == "" {
				// Narrative combat has no initiative queue: each action is
				// a beat in which effects tick and the end is checked.
				_, evs = st.SettleNarrativeTurn(dice)
			} else {
				_, evs = st.AdvanceTurn(dice)
			}
			res.Events = append(res.Events, evs...)
			if !narrativeCombat || st.Game.Combat.Ending != "" {
				res.Events = append(res.Events, turnEvent(st))
			}
		}
	}
	st.RNG = dice.State()
	j.archive = t.archiveAfter(ctx, res.Agent, j.turnNo, res.Messages)
	return res, st, nil
}

// finish commits a finished job in ONE transaction, then applies and
// broadcasts it; a failed job commits only a system event.
func (t *table) finish(j *job, res agent.Result, st *engine.State, runErr error) {
	t.job = nil
	t.markIdle()
	ctx := context.Background()
	turnID := fmt.Sprintf("t%d", j.turnNo)
	if j.action != nil && t.abandoned[j.action.ID] {
		// The operator abandoned the action while it ran: already resolved
		// with a system event; its turn is never applied.
		delete(t.abandoned, j.action.ID)
		t.sinceJob = nil
		t.logTurn(j, res, "discarded", runErr)
		t.updateSummary()
		t.maybeStart()
		return
	}
	if runErr == nil {
		for _, f := range t.sinceJob {
			f(st)
		}
		msgs := agentMessages(res.Agent, j.turnNo, res.Messages)
		t.stampDeadlines(res.Events)
		c := store.Commit{State: st, Events: res.Events, Messages: msgs, Archive: j.archive}
		if j.action != nil {
			c.Resolve = []string{j.action.ID}
		}
		// Queued, not waited for: the next turn may start on this one's
		// state while the store writes it (pipeline.go).
		var pc *inflight
		archive := j.archive
		var planned *store.Memory // read now: the store fills archive in once queued
		if archive != nil {
			m := *archive
			planned = &m
		}
		if pc, runErr = t.queue(ctx, c, turnID, func(err error) {
			if err == nil {
				t.archived(archive)
			}
		}); runErr == nil {
			pc.st = st
			t.st = st
			t.remember(res.Agent, j.turnNo, res.Messages)
			if j.action != nil {
				t.drop(j.action.ID, store.ActionResolved)
			} else {
				t.forgetDMFailures()
			}
		}
		t.archiving(planned, runErr)
	}
	t.sinceJob = nil
	t.lastTurnAt = t.h.cfg.Now()
	if runErr != nil {
		t.logTurn(j, res, "failed", runErr)
		t.failed(ctx, j, runErr)
	} else {
		t.logTurn(j, res, "ok", nil)
	}
	t.updateSummary()
	t.maybeStart()
}

// agentMessages are a turn's messages as the store keeps them, their
// bodies encoded in a scratch buffer, then copied into one array of
// their exact size.
func agentMessages(agentName string, turnNo int, msgs []agent.Message) []store.AgentMessage {
	scratch := messageScratch.Get().(*[]byte)
	defer messageScratch.Put(scratch)
	buf := (*scratch)[:0]
	ends := make([]int, len(msgs))
	for i := range msgs {
		buf = msgs[i].AppendJSON(buf)
		ends[i] = len(buf)
	}
	*scratch = buf
	bodies := slices.Clone(buf)
	out := make([]store.AgentMessage, len(msgs))
	start := 0
	for i, end := range ends {
		out[i] = store.AgentMessage{Agent: agentName, Turn: turnNo, Body: bodies[start:end:end]}
		start = end
	}
	return out
}

// messageScratch holds the buffers agentMessages encodes in.
var messageScratch = sync.Pool{New: func() any { return new([]byte) }}

// failed handles a turn that could not finish: nothing of it was committed.
// A player's action is retried with backoff, then waits for its player
// (act again: retried; act anew: replaced) or, on a tactical turn, for the
// turn timer. A DM turn is retried with exponential backoff, and after
// dmMaxFailures failures in a row the fight ends with error_abort. The
// table hears of each change of state, not of every attempt.
func (t *table) failed(ctx context.Context, j *job, err error) {
	if t.h.ctx.Err() != nil {
		return // shutting down: the action stays pending for the restart
	}
	t.lastError = errText(err)
	if j.action == nil {
		t.dmFailed(ctx, j, err)
		return
	}
	a := j.action
	t.tried[a.ID]++
	n := t.tried[a.ID]
	t.log.Warn("turn failed", "turn", j.turnNo, "kind", j.kind, "action", a.ID, "attempt", n, "err", err)
	if l := t.life[a.ID]; l != nil {
		l.Attempts++
	}
	t.setLife(a.ID, store.ActionFailed, t.lastError)
	var msg string
	switch {
	case n == 1:
		msg = "The DM could not resolve the turn; it will be retried."
	case n >= maxAttempts:
		msg = fmt.Sprintf("The DM is unavailable and gave up on the action after %d attempts. Send it again to retry it, or act anew to replace it.", n)
		if t.waitingPC() == a.Seat && t.turnTimeout() > 0 {
			msg += fmt.Sprintf(" If nobody acts within %ds, the turn passes.", t.meta.Config.TurnTimeoutS)
		}
	}
	if msg != "" {
		t.tell(ctx, engine.NewEvent(engine.SystemData{Code: CodeUnavailable, Message: msg, ActionID: a.ID, Attempts: n}), j.turnNo)
	}
	if n < maxAttempts {
		t.holdFor(time.Duration(n*n) * time.Second)
	}
}

const (
	// dmMaxFailures is how many times in a row a DM turn of a fight may
	// fail before the fight ends with error_abort.
	dmMaxFailures = 5
	// dmBackoffMax caps the wait before a failed DM turn is retried.
	dmBackoffMax = 30 * time.Second
)

// dmBackoff is the wait after the n-th failure in a row of a DM turn:
// 1 s, 2 s, 4 s… at most dmBackoffMax.
func dmBackoff(n int) time.Duration {
	if n > 6 {
		return dmBackoffMax
	}
	return min(dmBackoffMax, time.Second<<(n-1))
}

// dmFailed handles a failed DM turn (bookend, NPC, forced resolution).
func (t *table) dmFailed(ctx context.Context, j *job, err error) {
	key := "dm:" + j.kind
	t.tried[key]++
	n := t.tried[key]
	t.log.Warn("turn failed", "turn", j.turnNo, "kind", j.kind, "attempt", n, "err", err)
	if n >= dmMaxFailures && t.st.Game.Combat != nil {
		msg := fmt.Sprintf("The DM failed %d times in a row and the fight cannot go on: it ends here.", n)
		lead := engine.NewEvent(engine.SystemData{Code: CodeUnavailable, Message: msg, Outcome: engine.OutcomeErrorAbort})
		aerr := t.abortCombat(ctx, lead, "The fight was cut short: the DM was unavailable.")
		if aerr == nil {
			t.log.Warn("fight aborted", "turn", j.turnNo, "kind", j.kind, "failures", n)
			return
		}
		t.log.Error("abort the fight", "err", aerr)
	}
	if n == 1 {
		t.tell(ctx, engine.NewEvent(engine.SystemData{Code: CodeUnavailable,
			Message: "The DM could not play its turn; it will be retried, waiting longer each time.", Attempts: n}), j.turnNo)
	}
	t.holdFor(dmBackoff(n))
}

// tell commits one `system` event; a failure is only logged.
func (t *table) tell(ctx context.Context, ev engine.Event, turnNo int) {
	if err := t.commit(ctx, store.Commit{Events: []engine.Event{ev}}, fmt.Sprintf("t%d", turnNo)); err != nil {
		t.log.Error("commit system event", "err", err)
	}
}

// holdFor keeps turns from starting for d (the backoff after a failure),
// then tries again. Only the latest hold lifts itself; Retry and EndCombat
// lift it by setting hold to now.
func (t *table) holdFor(d time.Duration) {
	t.holdGen++
	gen := t.holdGen
	t.hold = t.h.cfg.Now().Add(d)
	t.h.after(d, func() {
		t.post(func() {
			if gen == t.holdGen {
				t.hold = time.Time{}
			}
			t.maybeStart()
		})
	})
}

// abortCombat ends the fight with outcome error_abort, whatever its state:
// lead (the operator's audit, or the DM's failure) and combat_ended are
// committed with it; the DM's failed fight turns are forgotten and the
// table plays on in exploration. No turn may be running.
func (t *table) abortCombat(ctx context.Context, lead engine.Event, summary string) error {
	if t.st.Game.Combat == nil {
		return engine.Errorf(engine.EINVALID, "There is no fight to end.")
	}
	next := t.st.Clone()
	next.Game.Combat.Ending = "" // this outcome, whatever the fight's state
	_, evs, err := next.EndCombat(engine.OutcomeErrorAbort, summary)
	if err != nil {
		return err
	}
	c := store.Commit{State: next, Events: append([]engine.Event{lead}, evs...)}
	if err := t.commit(ctx, c, fmt.Sprintf("t%d", t.st.Game.Turn)); err != nil {
		return fmt.Errorf("end the fight at %s: %w", t.id, err)
	}
	t.setState(next)
	t.forgetDMFailures()
	t.holdGen++
	t.hold = time.Time{}
	t.updateSummary()
	t.maybeStart()
	return nil
}

// forgetDMFailures resets the count of the DM's failed turns.
func (t *table) forgetDMFailures() {
	for k := range t.tried {
		if strings.HasPrefix(k, "dm:") {
			delete(t.tried, k)
		}
	}
}

func turnEvent(st *engine.State) engine.Event {
	cb := st.Game.Combat
	if cb == nil {
		return engine.ModeEvent(st.Game.Mode)
	}
	if cb.Ending != "" {
		return engine.ResolutionTurnEvent(cb.Round, cb.Index, cb.Ending)
	}
	return engine.TurnEvent(cb.Round, cb.Index, entryView(st, cb.Current()))
}
