package tavern

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"tavern/internal/agent"
	"tavern/internal/hub"
)

// On several nodes the operator acts on the node that took the request;
// clusterSync brings what the store says to this node's memory every lease
// renewal: the players shut out (so their sockets here close too), and
// the models' spend and budgets.
type clusterSync struct {
	every time.Duration
	log   *slog.Logger
	steps []func(ctx context.Context) error
	stop  chan struct{}
	done  sync.WaitGroup
}

func (s *clusterSync) start() {
	s.stop = make(chan struct{})
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		tick := time.NewTicker(s.every)
		defer tick.Stop()
		for {
			s.run()
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
}

func (s *clusterSync) run() {
	for _, step := range s.steps {
		ctx, cancel := context.WithTimeout(context.Background(), max(s.every, 5*time.Second))
		if err := step(ctx); err != nil {
			s.log.Warn("cluster sync", "err", err)
		}
		cancel()
	}
}

func (s *clusterSync) close() {
	if s == nil || s.stop == nil {
		return
	}
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.done.Wait()
}

// moderatedStore lists the players the operator shut out (pgdb.DB).
type moderatedStore interface {
	Moderated(ctx context.Context) (banned map[string]string, erased map[string]bool, err error)
}

// moderation applies here the bans and erasures made on any node: a
// player newly banned has their sockets closed 4003, one newly erased is
// erased from the tables loaded here (the store fenced those tables, so
// no commit of their old state lands), and a lifted ban lets them back.
type moderation struct {
	store  moderatedStore
	hub    *hub.Hub
	looked bool
	banned map[string]string
	erased map[string]bool
}

func (m *moderation) step(ctx context.Context) error {
	banned, erased, err := m.store.Moderated(ctx)
	if err != nil {
		return err
	}
	for id := range banned {
		if _, ok := m.banned[id]; !ok {
			m.hub.ClosePlayer(ctx, id, hub.ReasonServerBan)
		}
	}
	for id := range m.banned {
		if _, ok := banned[id]; !ok && !erased[id] {
			m.hub.AllowPlayer(id)
		}
	}
	// Players erased before the first look have nothing in memory here:
	// their tables were loaded from the scrubbed rows.
	if m.looked {
		for id := range erased {
			if !m.erased[id] {
				// A table the store fenced fails its commit and reloads:
				// said in the hub's log, not an error of the sync.
				_ = m.hub.ErasePlayer(ctx, id)
			}
		}
	}
	m.banned, m.erased, m.looked = banned, erased, true
	return nil
}

// syncBudget reads today's spend of every node and the tables' budgets
// from the store into this node's budget, which otherwise counts only its
// own calls and the budgets set through it.
func syncBudget(store operatorStore, b *agent.Budget, now func() time.Time) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		at := now()
		spend, err := store.SpendSince(ctx, at)
		if err != nil {
			return err
		}
		limits, err := store.TableBudgets(ctx)
		if err != nil {
			return err
		}
		total, spent, lim := 0.0, map[string]float64{}, map[string]float64{}
		for _, s := range spend {
			if s.Day != at.UTC().Format(time.DateOnly) {
				continue
			}
			total += s.USD
			if s.TableID != "" {
				spent[s.TableID] += s.USD
			}
		}
		for _, l := range limits {
			if l.USDPerDay > 0 {
				lim[l.TableID] = l.USDPerDay
			}
		}
		b.Reset(at, total, spent, lim)
		return nil
	}
}
