package hub_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/coder/websocket"

	"tavern/internal/hub"
)

// TestFailedTurnCommitRestartsTheTable: a table queues its turn's commit
// without waiting (pipeline.go). When the store fails it (here a real
// SQLite trigger refuses the narration), nobody is told of the turn: the
// table restarts from the store, its sockets close with 1012, and on
// reconnecting the player finds the action still waiting, played again
// once the store takes it, with events in seq order and no gap. The
// same act sent again is acked, not applied twice.
func TestFailedTurnCommitRestartsTheTable(t *testing.T) {
	e := newEnv(t, 5)
	tid := e.table(hub.TableSpec{})
	p, tok := e.player("Ann")
	e.sit(tid, p, "Aldric", "warrior")
	a := e.dial(tid, "player", tok, -1)

	raw := openRaw(t, e.dbPath)
	mustExec := func(q string) {
		t.Helper()
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(`CREATE TRIGGER injected BEFORE INSERT ON events WHEN NEW.kind = 'narration'
BEGIN SELECT RAISE(ABORT, 'injected fault'); END`)

	if f := a.act("k1", "I look around the square"); f.Type != "ack" {
		t.Fatalf("k1: %+v", f)
	}
	seen := a.events
	for f := range a.frames { // until the table closes the socket
		if f.Type == "event" {
			seen = append(seen, f)
		}
	}
	if code := websocket.CloseStatus(<-a.closed); code != websocket.StatusServiceRestart {
		t.Fatalf("close status %v, want 1012", code)
	}
	var last int64
	for _, f := range seen {
		if f.Kind == "narration" && dataOf(f)["action_id"] != nil {
			t.Errorf("the failed turn's narration was published: %s", f.Data)
		}
		last = f.Seq
	}

	mustExec(`DROP TRIGGER injected`)
	b := e.dial(tid, "player", tok, last)
	if f := b.act("k1", "I look around the square"); f.Type != "ack" {
		t.Fatalf("k1 sent again: %+v", f)
	}
	narration := b.event("narration")
	seq := last
	for _, f := range b.events {
		if f.Seq != seq+1 {
			t.Fatalf("events after %d: seq %d follows %d", last, f.Seq, seq)
		}
		seq = f.Seq
	}
	actions := 0
	for _, f := range b.events {
		if f.Kind == "action" {
			actions++
		}
	}
	if actions != 0 {
		t.Errorf("%d action events after the restart: the act was applied twice", actions)
	}
	if dataOf(narration)["action_id"] == nil {
		t.Errorf("narration %+v does not name the action", narration)
	}
}

// TestResentActAnsweredFromMemory: an act sent again after it was played,
// when nothing else would refuse it, is acked from the table's memory of
// the player's last actions, also after a restart on the same file: it is
// never stored twice, and the table does not restart over it (the store
// would refuse the duplicate, which fails the commits queued behind it).
func TestResentActAnsweredFromMemory(t *testing.T) {
	e, tid, tok, a := playedOnce(t)
	resend := func(c *wsClient, next string) {
		t.Helper()
		if f := c.act("k1", "I look around the square"); f.Type != "ack" || f.Status != "accepted" {
			t.Errorf("k1 again: %+v", f)
		}
		// The same socket plays on: the table did not restart.
		if f := c.act(next, "I listen at the door"); f.Type != "ack" {
			t.Fatalf("%s: %+v", next, f)
		}
		c.until("narration of "+next, func(f frame) bool { return f.Type == "event" && f.Kind == "narration" })
	}
	resend(a, "k2")

	e.srv.CloseClientConnections()
	e.shutdown()
	e.open()
	resend(e.dial(tid, "player", tok, -1), "k3")
}

// TestReaderGoesOnWhileAnActWaits: a socket's reader hands an act or a
// line to the table and reads on; it does not wait for the answer, which
// the table sends once the store holds the commit. Here another
// connection holds SQLite's write lock, so the say's commit waits; a
// ping sent after it is answered meanwhile, and the say's ack comes once
// the lock is let go.
func TestReaderGoesOnWhileAnActWaits(t *testing.T) {
	e, _, _, a := playedOnce(t)

	release := holdWriteLock(t, e.dbPath)
	a.send(map[string]string{"type": "say", "id": "s1", "text": "Anyone seen the miller?"})
	a.send(map[string]string{"type": "ping", "id": "p1"})
	f := a.until("pong", func(f frame) bool { return f.Type == "pong" || f.ID == "s1" })
	if f.Type != "pong" {
		t.Fatalf("%+v came before the pong: the reader waited for the say", f)
	}
	release()
	if f := a.until("answer to s1", func(f frame) bool { return f.ID == "s1" }); f.Type != "ack" {
		t.Fatalf("s1: %+v", f)
	}
}

// playedOnce opens a table where Ann's act "k1" has been narrated, and
// returns her socket.
func playedOnce(t *testing.T) (e *env, tableID, token string, a *wsClient) {
	t.Helper()
	e = newEnv(t, 5)
	tableID = e.table(hub.TableSpec{})
	p, token := e.player("Ann")
	e.sit(tableID, p, "Aldric", "warrior")
	a = e.dial(tableID, "player", token, -1)
	if f := a.act("k1", "I look around the square"); f.Type != "ack" {
		t.Fatalf("k1: %+v", f)
	}
	a.event("narration")
	return e, tableID, token, a
}

// openRaw opens the test's database file beside the hub's store, closed
// when the test ends.
func openRaw(t *testing.T, path string) *sql.DB {
	t.Helper()
	// The hub writes beside it (a table restarting reloads and commits):
	// wait for its lock instead of failing with SQLITE_BUSY.
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return raw
}

// TestEarlyAnswersWaitForTheCommitsInFlight: an answer the table gives
// without a commit of its own (here the ack of an act sent again) rests on
// its state, which runs ahead of the store by the commits in flight, so it
// leaves only once they are durable. Here the store cannot commit (another
// connection holds the write lock): the act sent again is not acked before
// the act itself.
func TestEarlyAnswersWaitForTheCommitsInFlight(t *testing.T) {
	e, _, _, a := playedOnce(t)
	release := holdWriteLock(t, e.dbPath)
	a.send(map[string]string{"type": "act", "id": "k2", "text": "I look around the square"})
	a.send(map[string]string{"type": "act", "id": "k2", "text": "I look around the square"})
	a.send(map[string]string{"type": "ping", "id": "p1"})
	if f := a.until("pong", func(f frame) bool { return f.Type == "pong" || f.ID == "k2" }); f.Type != "pong" {
		t.Fatalf("%+v came before the pong, while the store could not commit", f)
	}
	// The table answers the act sent again within microseconds of its
	// turn in the inbox; give it 300 ms.
	for wait := time.After(300 * time.Millisecond); ; {
		var f frame
		select {
		case f = <-a.frames:
		case <-wait:
		}
		if f.Type == "" {
			break
		}
		if f.ID == "k2" {
			t.Fatalf("%+v before the store could commit", f)
		}
		a.backlog = append(a.backlog, f)
	}
	release()
	for i := range 2 {
		if f := a.until("answer to k2", func(f frame) bool { return f.ID == "k2" }); f.Type != "ack" {
			t.Fatalf("answer %d to k2: %+v", i+1, f)
		}
	}
}

// holdWriteLock takes SQLite's write lock on the file at path from a
// connection of its own, so the store's commits wait, until release.
func holdWriteLock(t *testing.T, path string) (release func()) {
	t.Helper()
	ctx := context.Background()
	lock, err := openRaw(t, path).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Close() })
	if _, err := lock.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		if _, err := lock.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Fatal(err)
		}
	}
}
