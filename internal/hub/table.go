package hub

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"tavern/internal/engine"
	"tavern/internal/store"
)

const (
	// queueSize bounds each of a table's two queues (players, system).
	queueSize    = 256
	recentEvents = 50
	// replayLimit is the most events replayed to a reconnecting client;
	// further behind, it gets a fresh snapshot instead.
	replayLimit = 500
	// systemBurst is how many system commands in a row the loop runs
	// first while player commands wait: the system goes first, but
	// players are never starved.
	systemBurst = 8
)

// table is one table's actor: two queues and the effects of what they
// bring. The rules it applies live elsewhere: the action lifecycle in
// actions, the choice of the next turn in nextTurn, the game in engine.
// Every field below system is owned by the table goroutine (loop) and
// touched only from commands it runs.
type table struct {
	h   *Hub
	id  string
	log *slog.Logger
	// players carries what players send: acts, says, joins and partings
	// of sockets, their HTTP requests (post, call). system carries the
	// rest: turn results, timers, the operator (postSystem, tryPost,
	// callSystem). The store's answers come on answered.
	players, system chan func()
	// storeWait: a look at whether the store writes again is due
	// (waitForStore).
	storeWait bool
	summary   atomic.Pointer[TableSummary]
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
	// flight are the commits queued with the store (pipeline.go).
	flight  flight
	seats   []engine.Seat
	clients map[*client]struct{}
	subs    map[*sub]struct{}
	recent  []engine.Event
	// acts is the action lifecycle: open actions, attempts, backoff.
	acts *actions
	job  *job
	// sinceJob replays seat changes made while a job ran onto its result.
	sinceJob []func(st *engine.State)
	// timer resolves an absent player's tactical turn (timer.go).
	timer turnTimer
	// statePending: a state frame is queued (client.go, stateChanged).
	statePending bool

	// The operator's side (admin.go, moderation.go). paused: no turn
	// runs and act is refused; closed: gone from the lobby, read-only.
	paused, closed bool
	lastTurnAt     time.Time
	lastError      string
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
	// own is the owner's side (owners.go, notes.go): invite and bans,
	// notes, whispers and save points. access, who may see the table, is
	// published from it and the seats for readers off the goroutine.
	own    ownerState
	access atomic.Pointer[access]
}

// adminCounts are a table's counters published for the metrics.
type adminCounts struct {
	Paused, Closed, Busy bool
	Players, Spectators  int
}

type sub struct{ ch chan engine.Event }

func (h *Hub) newTable(d store.TableData) *table {
	t := &table{
		h: h, id: d.Table.ID, log: h.log.With("table", d.Table.ID), gone: make(chan struct{}),
		players: make(chan func(), queueSize), system: make(chan func(), queueSize),
		meta: d.Table, st: d.State, shown: d.State, seq: d.Seq, numbered: d.Seq, seats: d.Seats, clients: map[*client]struct{}{},
		flight: flight{answered: make(chan struct{}, 1), chain: h.chains.Add(1)}, subs: map[*sub]struct{}{},
		acts: newActions(d.Pending, d.RecentActs), lastTurnAt: d.LastTurnAt,
	}
	if recent, err := h.cfg.Store.Events(context.Background(), t.id, max(0, d.Seq-recentEvents), recentEvents); err == nil {
		t.recent = recent
	}
	t.updateSummary()
	return t
}

func (t *table) start() {
	if t.h.spawn(t.loop) {
		t.postSystem(t.maybeStart)
	}
}

// loop runs the table's commands until the hub closes or the table is
// unloaded.
func (t *table) loop() {
	burst := 0
	for t.next(&burst) {
		if t.evicted {
			close(t.gone)
			return
		}
	}
}

// next runs one command, or shuts the table down and reports false once
// the hub closes. System traffic goes first, up to systemBurst commands
// in a row (burst counts them); then a waiting player's command runs
// before the system's next, so neither queue starves.
func (t *table) next(burst *int) bool {
	if t.h.ctx.Err() != nil {
		t.shutdown()
		return false
	}
	if *burst >= systemBurst {
		*burst = 0
		select {
		case f := <-t.players:
			f()
			return true
		default:
		}
	}
	select {
	case f := <-t.system:
		*burst++
		f()
		return true
	case <-t.flight.answered:
		*burst++
		t.settle()
		return true
	default:
	}
	select {
	case <-t.h.ctx.Done():
		t.shutdown()
		return false
	case f := <-t.system:
		*burst++
		f()
	case <-t.flight.answered:
		*burst++
		t.settle()
	case f := <-t.players:
		*burst = 0
		f()
	}
	return true
}

// shutdown answers what is in flight and closes every socket and
// subscription as the hub closes.
func (t *table) shutdown() {
	t.drain()
	code, reason := websocket.StatusCode(1001), "server shutting down"
	if t.h.draining.Load() {
		// Released once its commits have landed, so that another node
		// serves it by the time its clients are back (nodes.go).
		code, reason = websocket.StatusServiceRestart, "this node is draining; reconnect"
		t.unloaded()
	}
	for c := range t.clients {
		c.close(code, reason)
	}
	for s := range t.subs {
		close(s.ch)
		delete(t.subs, s)
	}
}

// post queues f, a player's command, on the table goroutine. Policy when
// the players queue is full: the sender blocks (a socket's reader stops
// reading, so its player is slowed down, not refused), until there is
// room or the hub closes or the table is gone; never dropped once queued.
func (t *table) post(f func()) bool { return t.enqueue(t.players, f) }

// postSystem queues f, system work that must not be lost (a turn's
// result, a timer), on the table goroutine. Policy when the system queue
// is full: the sender blocks until there is room or the hub closes or the
// table is gone (then the work is moot); never dropped once queued. Its
// senders are few (one turn job at a time, a few alarms), so it is never
// full for long.
func (t *table) postSystem(f func()) bool { return t.enqueue(t.system, f) }

func (t *table) enqueue(q chan func(), f func()) bool {
	select {
	case q <- f:
		return true
	case <-t.h.ctx.Done():
		return false
	case <-t.gone:
		return false
	}
}

// tryPost queues f on the system queue unless it is full, and reports
// whether it did. Policy when full: f is dropped, so it is only for work
// that may be (narration deltas: the narration event carries the whole
// text; the eviction check: tried again on the next tick).
func (t *table) tryPost(f func()) bool {
	select {
	case t.system <- f:
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
// that was then still committed (TestCallStartedCommandAnswers).
//
// call is for players: it queues on the players queue, and while that is
// full it waits, within ctx (post's policy).
func (t *table) call(ctx context.Context, f func() error) error {
	return t.send(ctx, t.players, f, true)
}

// callShown is call for a command that reads only what clients are shown
// (durable already: the seat check and welcome of a socket that connects),
// answered as soon as f returns, not once the commits in flight settle:
// a store that retries a commit on a full disk must not hold it
// (storage.go).
func (t *table) callShown(ctx context.Context, f func() error) error {
	return t.send(ctx, t.players, f, false)
}

// callSystem is call on the system queue, for the operator: its commands
// are not held up behind the players'. Policy when full: the caller
// blocks, within ctx.
func (t *table) callSystem(ctx context.Context, f func() error) error {
	return t.send(ctx, t.system, f, true)
}

func (t *table) send(ctx context.Context, q chan func(), f func() error, settled bool) error {
	const queued, running, cancelled = 0, 1, 2
	var state atomic.Int32
	done := make(chan error, 1)
	cmd := func() {
		if !state.CompareAndSwap(queued, running) {
			return
		}
		err := f()
		if !settled {
			done <- err
			return
		}
		t.afterSettled(func(unsaved error) {
			if err == nil {
				err = unsaved
			}
			done <- err
		})
	}
	select {
	case q <- cmd:
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

// queueLife hands an action's life to the store without waiting: it is
// bookkeeping, and the action itself is already durable.
func (t *table) queueLife(l store.ActionLife) { t.h.cfg.Store.QueueActionState(t.id, l) }

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
	if t.closed {
		s.Status = "closed" // the page of a player who played it (Visible)
	}
	t.summary.Store(&s)
	t.publishAccess()
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
		OwnerID: meta.OwnerID, Private: meta.Private, NPCHP: npcHPLabel(meta.Config.NPCHP),
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
		Notes: t.noteViews(),
		Shops: st.ShopsHere(), Undoable: len(t.own.points),
	}
	if t.h.storeFault() != nil {
		s.CannotSave = cannotSaveNotice
	}
	s.Online = onlineSeats(t.clients) // who is connected (views.go)
	if st.Config.Words() {
		a := t.access.Load()
		if t.npcsStale(a) {
			a = t.newAccess() // NPCs met since: read here, published by publish
		}
		a.snapshotWords(&s)
	}
	if st.Game.LastCombatResult != nil {
		s.LastCombat = st.Game.LastCombatResult
	}
	if s.Combat != nil && !t.timer.deadline.IsZero() {
		s.Combat.Deadline = t.timer.deadline.UTC().Format(time.RFC3339)
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
	a := t.access.Load()
	if t.npcsStale(a) {
		t.publishAccess() // the NPCs this turn met
		a = t.access.Load()
	}
	for i, e := range evs {
		changed = changed || e.Kind != engine.EventChat
		t.recent = append(t.recent, e)
		t.seq = e.Seq
		frame := eventFrameOf(e, data[i])
		if r, ok := a.redact(e); ok { // players' NPC health in words (words.go)
			e, frame = r, eventFrame(r)
		}
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
	// publish copying them (each chat line).
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
