package pgdb

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// Ownership and fencing (DESIGN.md "Beyond one machine"). A node that
// Joins has a nodes row, renewed every Renew and dead TTL after its last
// renewal by the database's clock. A table is run by the node of its
// table_owners row; every claim raises the row's epoch. The claim takes
// the row FOR UPDATE, so it waits for the old owner's commit in progress
// and the new owner loads after it; every group-commit transaction reads
// its tables' rows FOR SHARE first and fails the commits whose (node,
// epoch) no longer match with store.ErrFenced, writing nothing. So a
// stalled owner that wakes after its tables moved can never write: the
// lease only decides when a table may be claimed, the fence makes the
// ownership exclusive.

// NodeConfig is a node's membership of the cluster.
type NodeConfig struct {
	// Addr is the host:port the other nodes reach this one at.
	Addr string
	// TTL is how long the node's row lives after a renewal (default
	// 10s); Renew how often it is renewed (default 2s); Sweep how often,
	// on average, the node looks for orphaned tables to adopt (default
	// 3s; each wait is drawn from half to one and a half of it).
	TTL, Renew, Sweep time.Duration
	// Lost is told of each table this node no longer owns (fenced, or
	// its lease lapsed): the hub unloads it and closes its sockets 1012.
	// It must not block.
	Lost func(tableID string)
	// Adopt is given the tables of dead or departed nodes that cannot
	// wait (an open action, a fight): the hub loads each, which claims it
	// (LoadTable). It runs on the sweeper's goroutine.
	Adopt func(ctx context.Context, tableID string)
	// Sockets, if set, gives the node's open websockets for its row (the
	// operator's overview).
	Sockets func() int
	// Connections, if set, gives the node's players' and spectators'
	// sockets and its active tables, for its row.
	Connections func() (players, spectators, active int)
	Log         *slog.Logger
}

// node is this process's membership (Join).
type node struct {
	cfg NodeConfig
	mu  sync.Mutex
	id  string
	// owned holds the epoch of every table this node owns.
	owned    map[string]int64
	draining bool
	// renewed is when the last renewal succeeded (this process's clock),
	// for a node that cannot reach the database to give its tables up.
	renewed time.Time

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NodeID returns this node's id ("" before Join). A node that finds its
// lease lapsed registers anew, under a new id.
func (d *DB) NodeID() string {
	n := d.node.Load()
	if n == nil {
		return ""
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.id
}

// Join makes the DB a cluster node: it registers the node and starts
// renewing its lease and sweeping for orphaned tables, until Close. From
// then on LoadTable claims the table it loads, and commits are fenced.
func (d *DB) Join(ctx context.Context, cfg NodeConfig) error {
	if cfg.TTL <= 0 {
		cfg.TTL = 10 * time.Second
	}
	if cfg.Renew <= 0 {
		cfg.Renew = 2 * time.Second
	}
	if cfg.Sweep <= 0 {
		cfg.Sweep = 3 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	n := &node{cfg: cfg, owned: map[string]int64{}}
	if err := d.register(ctx, n); err != nil {
		return err
	}
	if !d.node.CompareAndSwap(nil, n) {
		return errors.New("pgdb: already joined")
	}
	loop, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	n.wg.Add(2)
	go func() { defer n.wg.Done(); d.renewLoop(loop, n) }()
	go func() { defer n.wg.Done(); d.sweepLoop(loop, n) }()
	return nil
}

// register inserts a new nodes row for n under a new id.
func (d *DB) register(ctx context.Context, n *node) error {
	host, _ := os.Hostname()
	id := fmt.Sprintf("%s-%d-%s", host, os.Getpid(), crand.Text()[:6])
	_, err := d.pool.Exec(ctx, "INSERT INTO nodes (id, addr, expires_at) VALUES ($1, $2, now() + $3::interval)",
		id, n.cfg.Addr, n.cfg.TTL.String())
	if err != nil {
		return fmt.Errorf("register node: %w", err)
	}
	n.mu.Lock()
	n.id, n.renewed = id, time.Now()
	n.mu.Unlock()
	n.cfg.Log.Info("node registered", "node", id, "addr", n.cfg.Addr)
	return nil
}

func (d *DB) renewLoop(ctx context.Context, n *node) {
	tick := time.NewTicker(n.cfg.Renew)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			d.renew(ctx, n)
		}
	}
}

// renew extends n's lease. A lease found lapsed (another node may have
// claimed the tables), or not renewed for a TTL because the database was
// out of reach, drops every table and registers anew.
func (d *DB) renew(ctx context.Context, n *node) {
	n.mu.Lock()
	id, tables, state, renewed := n.id, len(n.owned), "alive", n.renewed
	if n.draining {
		state = "draining"
	}
	n.mu.Unlock()
	sockets := 0
	if n.cfg.Sockets != nil {
		sockets = n.cfg.Sockets()
	}
	var players, spectators, active int
	if n.cfg.Connections != nil {
		players, spectators, active = n.cfg.Connections()
	}
	rctx, cancel := context.WithTimeout(ctx, n.cfg.Renew)
	ct, err := d.pool.Exec(rctx, `UPDATE nodes SET expires_at = now() + $2::interval, tables = $3, sockets = $4, state = $5,
		players = $6, spectators = $7, active = $8
		WHERE id = $1 AND expires_at > now()`, id, n.cfg.TTL.String(), tables, sockets, state, players, spectators, active)
	cancel()
	switch {
	case err != nil && time.Since(renewed) < n.cfg.TTL:
		n.cfg.Log.Warn("node lease not renewed; retrying", "node", id, "err", err)
		return
	case err != nil:
		n.cfg.Log.Error("node lease lapsed: the database is out of reach; dropping every table", "node", id, "err", err)
	case ct.RowsAffected() == 0:
		n.cfg.Log.Error("node lease lapsed; dropping every table and registering anew", "node", id)
	default:
		n.mu.Lock()
		n.renewed = time.Now()
		n.mu.Unlock()
		return
	}
	lost := d.dropAll(n)
	if err := d.register(ctx, n); err != nil {
		n.cfg.Log.Warn("node not registered; retrying", "err", err)
	}
	d.tellLost(n, lost)
}

// dropAll forgets every table n owns and returns them.
func (d *DB) dropAll(n *node) []string {
	n.mu.Lock()
	lost := make([]string, 0, len(n.owned))
	for id := range n.owned {
		lost = append(lost, id)
	}
	clear(n.owned)
	n.mu.Unlock()
	return lost
}

// tellLost tells the hub n lost the tables.
func (d *DB) tellLost(n *node, lost []string) {
	for _, id := range lost {
		d.forgetRows(id)
		if n.cfg.Lost != nil {
			n.cfg.Lost(id)
		}
	}
}

// qOrphans lists the open tables that cannot wait (an open action, a
// fight) whose owner is gone: released, or a node whose lease lapsed. The
// owner test comes first and is cheap; only the tables it leaves (those
// released when unloaded, mostly) are looked into, the fight by a
// substring of the game's JSON, which Go writes compact with Mode the only
// "mode" key, rather than parsing every game as jsonb.
const qOrphans = `SELECT t.id FROM tables t
LEFT JOIN table_owners o ON o.table_id = t.id
LEFT JOIN nodes n ON n.id = o.node_id
WHERE t.closed_at IS NULL
AND (o.node_id IS NULL OR n.id IS NULL OR n.expires_at <= now())
AND (EXISTS (SELECT 1 FROM pending_actions p WHERE p.table_id = t.id AND p.status = 'pending')
	OR EXISTS (SELECT 1 FROM game_state g WHERE g.table_id = t.id AND strpos(g.game, '"mode":"combat"') > 0))
ORDER BY t.id LIMIT 100`

// nodesGC is how often a node removes the rows of nodes long dead.
const nodesGC = time.Minute

// sweepWait is the wait before the next sweep: every drawn from
// [every/2, 3*every/2), so that nodes started together do not sweep
// together.
func sweepWait(every time.Duration) time.Duration {
	return every/2 + rand.N(every)
}

func (d *DB) sweepLoop(ctx context.Context, n *node) {
	timer := time.NewTimer(sweepWait(n.cfg.Sweep))
	defer timer.Stop()
	var collected time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		timer.Reset(sweepWait(n.cfg.Sweep))
		n.mu.Lock()
		draining := n.draining
		n.mu.Unlock()
		if draining || n.cfg.Adopt == nil {
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, n.cfg.Sweep+time.Second)
		if time.Since(collected) >= nodesGC {
			collected = time.Now()
			// Rows of nodes long dead go; their tables' owner rows then
			// name no node, which a claim treats as released.
			if _, err := d.pool.Exec(sctx, "DELETE FROM nodes WHERE expires_at < now() - interval '10 minutes'"); err != nil && ctx.Err() == nil {
				n.cfg.Log.Warn("removing dead nodes' rows failed", "err", err)
			}
		}
		var ids []string
		err := each(sctx, d.pool, qOrphans, nil, func(r pgx.Rows) error {
			var id string
			ids = append(ids, id)
			return r.Scan(&ids[len(ids)-1])
		})
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				n.cfg.Log.Warn("orphan sweep failed", "err", err)
			}
			continue
		}
		for _, id := range ids {
			n.cfg.Adopt(ctx, id)
		}
	}
}

// OwnedElsewhere is the error of LoadTable for a table another live node
// owns: Addr is where it is served.
type OwnedElsewhere struct {
	TableID, Node, Addr string
}

func (e *OwnedElsewhere) Error() string {
	return fmt.Sprintf("table %s is served by node %s (%s)", e.TableID, e.Node, e.Addr)
}

// Unwrap makes it match store.ErrNotOwner and carry EUNAVAILABLE.
func (e *OwnedElsewhere) Unwrap() []error {
	return []error{store.ErrNotOwner, engine.Errorf(engine.EUNAVAILABLE, "The table is changing hands; try again.")}
}

// Owner returns the live node that owns table id, its address, the
// table's epoch and whether that node is draining (about to release it);
// node and addr are "" when no live node holds it.
func (d *DB) Owner(ctx context.Context, id string) (node, addr string, epoch int64, draining bool, err error) {
	var nid, naddr, state *string
	err = d.pool.QueryRow(ctx, `SELECT o.node_id, n.addr, n.state, o.epoch FROM table_owners o
		LEFT JOIN nodes n ON n.id = o.node_id AND n.expires_at > now()
		WHERE o.table_id = $1`, id).Scan(&nid, &naddr, &state, &epoch)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", 0, false, nil
	}
	if err != nil || naddr == nil {
		return "", "", epoch, false, err
	}
	return *nid, *naddr, epoch, *state == "draining", nil
}

// claim makes this node the owner of table id, raising its epoch, unless
// it owns it already or another live node does (*OwnedElsewhere). It
// takes the owner row FOR UPDATE: it waits for a commit of the old owner
// in progress, so what LoadTable reads next includes it.
func (d *DB) claim(ctx context.Context, n *node, id string) error {
	n.mu.Lock()
	me, draining := n.id, n.draining
	_, mine := n.owned[id]
	n.mu.Unlock()
	if mine {
		return nil
	}
	if draining {
		return engine.Errorf(engine.EUNAVAILABLE, "This node is draining; try again.")
	}
	var epoch int64
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		var owner, addr *string
		var live bool
		err := tx.QueryRow(ctx, `SELECT o.node_id, o.epoch, n.addr, COALESCE(n.expires_at > now(), false)
			FROM table_owners o LEFT JOIN nodes n ON n.id = o.node_id WHERE o.table_id = $1 FOR UPDATE OF o`, id).
			Scan(&owner, &epoch, &addr, &live)
		if errors.Is(err, pgx.ErrNoRows) {
			var exists bool
			if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM tables WHERE id = $1)", id).Scan(&exists); err != nil {
				return err
			}
			if !exists {
				return tableNotFound(id)
			}
			ct, err := tx.Exec(ctx, `INSERT INTO table_owners (table_id, node_id, epoch) VALUES ($1, $2, 1) ON CONFLICT (table_id) DO NOTHING`, id, me)
			if err != nil {
				return err
			}
			if ct.RowsAffected() == 0 {
				return errClaimRace
			}
			epoch = 1
			return nil
		}
		if err != nil {
			return err
		}
		if owner != nil && *owner != me && live {
			return &OwnedElsewhere{TableID: id, Node: *owner, Addr: *addr}
		}
		epoch++
		_, err = tx.Exec(ctx, "UPDATE table_owners SET node_id = $2, epoch = $3, claimed_at = now() WHERE table_id = $1", id, me, epoch)
		return err
	})
	if errors.Is(err, errClaimRace) {
		return d.claim(ctx, n, id) // the row appeared meanwhile: read it
	}
	if err != nil {
		return err
	}
	n.mu.Lock()
	if n.id == me {
		n.owned[id] = epoch
	}
	n.mu.Unlock()
	d.forgetRows(id) // rows another node may have written
	n.cfg.Log.Info("table claimed", "table", id, "epoch", epoch)
	return nil
}

var errClaimRace = errors.New("pgdb: owner row inserted concurrently")

// qFence reads the owner rows of tables $1 FOR SHARE and fails, dividing
// by zero, unless each names node $2 under the epoch of $3 (0 for a table
// not held never matches): as a statement of the transaction it aborts
// it, so a fenced commit writes nothing even when the transaction is sent
// and committed in one round trip.
const qFence = `SELECT 1 / (count(*) = cardinality($1::text[]))::int
FROM (SELECT table_id, node_id, epoch FROM table_owners WHERE table_id = ANY($1::text[]) FOR SHARE) o
JOIN unnest($1::text[], $3::bigint[]) AS h(table_id, epoch) ON h.table_id = o.table_id
WHERE o.node_id = $2 AND o.epoch = h.epoch`

// fence queues, first in t, the owner check of the tables of batch and
// lives, and returns the epoch this node holds each under. Off a cluster
// it queues nothing and returns nil (every epoch 0).
func (d *DB) fence(t *btx, batch []*commitReq, lives []store.Commit) map[string]int64 {
	n := d.node.Load()
	if n == nil {
		return nil
	}
	held := map[string]int64{}
	n.mu.Lock()
	me := n.id
	add := func(id string) {
		if id == "" {
			return
		}
		if _, ok := held[id]; !ok {
			held[id] = n.owned[id] // 0: not owned, fenced below
		}
	}
	for _, r := range batch {
		add(r.c.TableID)
	}
	for _, c := range lives {
		add(c.TableID)
	}
	n.mu.Unlock()
	if len(held) == 0 {
		return held
	}
	ids, epochs := make([]string, 0, len(held)), make([]int64, 0, len(held))
	for id, e := range held {
		ids, epochs = append(ids, id), append(epochs, e)
	}
	t.b.Queue(qFence, ids, me, epochs).Fn = func(br pgx.BatchResults) error {
		var ok int
		err := br.QueryRow().Scan(&ok)
		if pgCode(err) == "22012" {
			if len(ids) == 1 {
				return fmt.Errorf("table %s is no longer this node's under epoch %d: %w", ids[0], epochs[0], store.ErrFenced)
			}
			return fmt.Errorf("one of tables %v is no longer this node's: %w", ids, store.ErrFenced)
		}
		return err
	}
	return held
}

// ownedLives returns the action states of lives whose tables this node
// owns: a fenced table's states belong to its new owner, and one such
// table in a transaction would fail the states of every other.
func (d *DB) ownedLives(lives []store.Commit) []store.Commit {
	n := d.node.Load()
	if n == nil || len(lives) == 0 {
		return lives
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	out := lives[:0:0]
	for _, c := range lives {
		if _, ok := n.owned[c.TableID]; ok {
			out = append(out, c)
		}
	}
	return out
}

// fenced is told that a commit of table id was fenced: the node no longer
// owns it.
func (d *DB) fenced(id string) {
	n := d.node.Load()
	if n == nil {
		return
	}
	n.mu.Lock()
	_, had := n.owned[id]
	delete(n.owned, id)
	n.mu.Unlock()
	d.forgetRows(id)
	if had && n.cfg.Lost != nil {
		n.cfg.Lost(id)
	}
}

// release gives up table id, if this node holds it, through the writer's
// queue, so that it lands after the table's last commit: the hub unloaded
// it (evicted, or drained).
func (d *DB) release(id string) {
	n := d.node.Load()
	if n == nil {
		return
	}
	n.mu.Lock()
	_, ok := n.owned[id]
	n.mu.Unlock()
	if !ok {
		return
	}
	r := &commitReq{c: store.Commit{TableID: id}, rows: &encodedRows{}, at: d.now(), done: func(error) {}, queued: time.Now(), release: true}
	if err := d.writerFor(id).enqueue(context.Background(), r); err != nil {
		n.cfg.Log.Warn("table not released; it will be claimed when this node's lease lapses", "table", id, "err", err)
	}
}

// queueRelease queues, in t, the release of table id held under epoch;
// once t commits, this node no longer owns it.
func (d *DB) queueRelease(t *btx, id string, epoch int64) {
	n := d.node.Load()
	if n == nil || epoch == 0 {
		return
	}
	n.mu.Lock()
	me := n.id
	n.mu.Unlock()
	t.exec("UPDATE table_owners SET node_id = NULL WHERE table_id = $1 AND node_id = $2 AND epoch = $3", []any{id, me, epoch}, wrapErr("release table "+id))
	t.afterCommit(func() {
		n.mu.Lock()
		if n.owned[id] == epoch {
			delete(n.owned, id)
		}
		n.mu.Unlock()
		n.cfg.Log.Info("table released", "table", id, "epoch", epoch)
	})
}

// Drain marks the node draining: it claims nothing more, and its row says
// so (the overview). The hub then unloads its tables, which releases them
// (Forget), and other nodes claim them at once.
func (d *DB) Drain(ctx context.Context) error {
	n := d.node.Load()
	if n == nil {
		return nil
	}
	n.mu.Lock()
	n.draining = true
	id := n.id
	n.mu.Unlock()
	_, err := d.pool.Exec(ctx, "UPDATE nodes SET state = 'draining' WHERE id = $1", id)
	return err
}

// Owned returns the tables this node owns, for the overview.
func (d *DB) Owned() int {
	n := d.node.Load()
	if n == nil {
		return 0
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.owned)
}

// claimNew queues, in the transaction that creates table id, its owner
// row for this node, and returns the epoch (0 off a cluster); the table
// is this node's once the transaction commits.
func (d *DB) claimNew(t *btx, id string) int64 {
	n := d.node.Load()
	if n == nil {
		return 0
	}
	n.mu.Lock()
	me := n.id
	n.mu.Unlock()
	t.exec("INSERT INTO table_owners (table_id, node_id, epoch) VALUES ($1, $2, 1)", []any{id, me}, wrapErr("claim new table"))
	t.afterCommit(func() {
		n.mu.Lock()
		if n.id == me {
			n.owned[id] = 1
		}
		n.mu.Unlock()
	})
	return 1
}

// leave stops the node's loops, releases every table it owns and removes
// its row, so other nodes claim its tables at once.
func (d *DB) leave(ctx context.Context, n *node) error {
	n.cancel()
	n.wg.Wait()
	n.mu.Lock()
	id := n.id
	clear(n.owned)
	n.mu.Unlock()
	_, err := d.pool.Exec(ctx, "UPDATE table_owners SET node_id = NULL WHERE node_id = $1", id)
	if err == nil {
		_, err = d.pool.Exec(ctx, "DELETE FROM nodes WHERE id = $1", id)
	}
	if err != nil {
		return fmt.Errorf("leave the cluster: %w", err)
	}
	return nil
}

// SetAddr changes the address other nodes reach this one at (a node that
// listens on port 0 learns it once listening).
func (d *DB) SetAddr(ctx context.Context, addr string) error {
	n := d.node.Load()
	if n == nil {
		return nil
	}
	n.mu.Lock()
	n.cfg.Addr = addr
	id := n.id
	n.mu.Unlock()
	_, err := d.pool.Exec(ctx, "UPDATE nodes SET addr = $2 WHERE id = $1", id, addr)
	return err
}

// Nodes returns every node's row, oldest first (a node whose lease lapsed
// is "dead" until the sweep removes it).
func (d *DB) Nodes(ctx context.Context) ([]store.Node, error) {
	var out []store.Node
	err := each(ctx, d.pool, `SELECT id, addr, CASE WHEN expires_at <= now() THEN 'dead' ELSE state END, tables, sockets, expires_at,
		players, spectators, active
		FROM nodes ORDER BY started_at, id`, nil, func(r pgx.Rows) error {
		var n store.Node
		if err := r.Scan(&n.ID, &n.Addr, &n.State, &n.Tables, &n.Sockets, &n.ExpiresAt, &n.Players, &n.Spectators, &n.Active); err != nil {
			return err
		}
		n.ExpiresAt = n.ExpiresAt.UTC()
		out = append(out, n)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("nodes: %w", err)
	}
	return out, nil
}

// Owners returns the live owner of every table a live node holds, by
// table id.
func (d *DB) Owners(ctx context.Context) (map[string]store.Owner, error) {
	out := map[string]store.Owner{}
	err := each(ctx, d.pool, `SELECT o.table_id, o.node_id, n.addr, o.epoch FROM table_owners o
		JOIN nodes n ON n.id = o.node_id AND n.expires_at > now()`, nil, func(r pgx.Rows) error {
		var id string
		var o store.Owner
		if err := r.Scan(&id, &o.Node, &o.Addr, &o.Epoch); err != nil {
			return err
		}
		out[id] = o
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("table owners: %w", err)
	}
	return out, nil
}
