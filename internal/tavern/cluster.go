package tavern

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"tavern/adventures"

	"tavern/internal/agent"
	"tavern/internal/dataset"
	"tavern/internal/db"
	"tavern/internal/hub"
	"tavern/internal/pgdb"
	"tavern/web"
)

// Store is what Tavern needs of its store; *db.DB (SQLite) and *pgdb.DB
// (PostgreSQL) both are one.
type Store interface {
	hub.Store
	agent.CallQueue
	agent.Conversations
	web.Players
	adventures.Store
	agent.ConversationList
	operatorStore
	// Unavailable says why the store cannot write now (nil: it can);
	// StopRetries makes it give up the writes it retries, for a shutdown.
	Unavailable() error
	StopRetries()
	Forget(tableID string)
	Close() error
}

var (
	_ Store = (*db.DB)(nil)
	_ Store = (*pgdb.DB)(nil)
)

// postgres reports whether the DB setting names a PostgreSQL database.
func (c *Config) postgres() bool { return pgdb.IsURL(c.DB) }

// checkCluster refuses cluster settings Tavern cannot use.
func (c *Config) checkCluster() error {
	if !c.postgres() {
		return nil
	}
	switch {
	case c.ClusterToken == "":
		return fmt.Errorf("TAVERN_CLUSTER_TOKEN is empty: with PostgreSQL the nodes sign the requests they pass to each other with it; set the same secret on every node")
	case c.DBMaxConns < 2:
		return fmt.Errorf("db-max-conns %d (TAVERN_DB_MAX_CONNS): want 2 or more", c.DBMaxConns)
	case c.LeaseRenew <= 0 || c.LeaseTTL < 2*c.LeaseRenew:
		return fmt.Errorf("lease-renew %s, lease-ttl %s: want a renewal above 0 and a TTL of at least two renewals, such as 2s and 10s", c.LeaseRenew, c.LeaseTTL)
	case c.OrphanSweep <= 0:
		return fmt.Errorf("orphan-sweep %s (TAVERN_ORPHAN_SWEEP): want a duration above 0, such as 1s", c.OrphanSweep)
	}
	addr, err := c.nodeAddr()
	if err != nil {
		return err
	}
	if c.NodeAddr == "" && loopback(addr) {
		if host := c.dbHost(); host != "" && !strings.HasPrefix(host, "/") && !loopback(net.JoinHostPort(host, "0")) {
			return fmt.Errorf("addr %s is a loopback address but the database is on %s, another host: the other nodes would pass requests to themselves; set TAVERN_NODE_ADDR (-node-addr) to the host:port they reach this node at", addr, host)
		}
	}
	return nil
}

// loopback reports whether host:port addr names this machine only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// dbHost is the host the PostgreSQL URL names ("" if it cannot tell; a
// path for a unix socket).
func (c *Config) dbHost() string {
	pc, err := pgconn.ParseConfig(c.DB)
	if err != nil {
		return ""
	}
	return pc.Host
}

// nodeAddr is the address other nodes reach this one at: NodeAddr, else
// Addr when it names a host.
func (c *Config) nodeAddr() (string, error) {
	if c.NodeAddr != "" {
		return c.NodeAddr, nil
	}
	host, port, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return "", fmt.Errorf("addr %q: %w", c.Addr, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		return "", fmt.Errorf("addr %s listens on every interface: set TAVERN_NODE_ADDR (-node-addr) to the host:port the other nodes reach this one at", c.Addr)
	}
	if port == "0" {
		return "", nil // known once listening (tests)
	}
	return c.Addr, nil
}

// openStore opens the store the DB setting names: PostgreSQL for a
// postgres:// URL (one attempt: New waits for one out of reach), else the
// SQLite file, whose single-writer lock it takes first (released by the
// returned function, after the store is closed). It sets t.PG or t.Store.
func (t *Tavern) openStore(ctx context.Context) (Store, func() error, error) {
	cfg := t.Config
	if cfg.postgres() {
		pg, err := pgdb.Open(ctx, cfg.DB, pgdb.Options{MaxConns: cfg.DBMaxConns})
		if err != nil {
			return nil, nil, err
		}
		t.PG = pg
		return pg, func() error { return nil }, nil
	}
	unlock, err := db.Lock(cfg.DB)
	if err != nil {
		return nil, nil, err
	}
	d, err := db.Open(ctx, cfg.DB)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	t.Store = d
	return d, unlock, nil
}

// join makes this server a node of the cluster when the store is
// PostgreSQL: the store then claims the tables the hub loads, fences the
// commits of tables that moved and tells the hub (Unload), and hands it
// the orphans of dead nodes (Adopt).
func (t *Tavern) join(ctx context.Context) error {
	if t.PG == nil {
		return nil
	}
	addr, err := t.Config.nodeAddr()
	if err != nil {
		return err
	}
	h := t.Hub
	err = t.PG.Join(ctx, pgdb.NodeConfig{
		Addr: addr, TTL: t.Config.LeaseTTL, Renew: t.Config.LeaseRenew, Sweep: t.Config.OrphanSweep,
		Lost: h.Unload, Adopt: h.Adopt, Sockets: h.Sockets, Connections: h.Connections, Log: t.Log,
	})
	if err != nil {
		return fmt.Errorf("join the cluster: %w", err)
	}
	return nil
}

// drain, on a node, hands its tables over as it closes: it claims nothing
// more, and the hub releases each table once its turn and commits are
// done, then closes its sockets 1012.
func (t *Tavern) drain() {
	if t.PG == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := t.PG.Drain(ctx); err != nil {
		t.Log.Warn("node not marked draining", "err", err)
	}
	t.Hub.Drain()
	t.Log.Info("draining: handing the tables over to the other nodes")
}

// openData opens the data agent's read-only view of the store: the SQLite
// file read-only, or on PostgreSQL a role of its own that may read the
// curated views only (pgdb.DataRole; its password derives from the
// cluster token, so every node sets the same). A PostgreSQL login that
// may not create roles leaves the data agent off (nil), said in the log.
func (t *Tavern) openData(ctx context.Context) (*dataset.Dataset, error) {
	if t.PG == nil {
		return dataset.Open(ctx, t.Config.DB)
	}
	var views []string
	for _, v := range dataset.Views() {
		views = append(views, v.Name)
	}
	m := hmac.New(sha256.New, []byte(t.Config.ClusterToken))
	m.Write([]byte("tavern data role"))
	url, err := t.PG.DataRole(ctx, t.Config.DB, hex.EncodeToString(m.Sum(nil)), views)
	if err != nil {
		t.Log.Warn("the data agent is off: its read-only role could not be set up (the database login needs CREATEROLE)", "err", err)
		return nil, nil
	}
	return dataset.OpenPostgres(ctx, url)
}
