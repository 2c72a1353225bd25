package main

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// stats gathers what the bots measured. Safe for concurrent use.
type stats struct {
	mu        sync.Mutex
	ack, turn []time.Duration
	// Of the actions sent once every bot (seats of them) had its first
	// action narrated: the run without its warm-up, when every table's
	// opening and the players' arrival turns are played at once.
	seats                 int64
	warmedUp              atomic.Int64 // bots with a first action narrated
	warmAt                atomic.Int64 // unix ns; 0 until every bot's was
	steadyAck, steadyTurn []time.Duration
	// Of the actions sent warmup or more after start (-warmup): with
	// -think, the players of tables opened at once act in waves for the
	// first rounds, which a warm-up of a few think times leaves out.
	start             time.Time
	warmup            time.Duration
	lateAck, lateTurn []time.Duration
	events, deltas    atomic.Int64
	acts, refusals    atomic.Int64
	fights            atomic.Int64
	failures          atomic.Int64
	firstErr          atomic.Value
}

func (s *stats) fail(err error) {
	if s.failures.Add(1) == 1 {
		s.firstErr.Store(err)
	}
}

// record records one action narrated; first: the bot's first.
func (s *stats) record(sent time.Time, ack, turn time.Duration, first bool) {
	s.mu.Lock()
	s.ack = append(s.ack, ack)
	s.turn = append(s.turn, turn)
	if at := s.warmAt.Load(); at != 0 && sent.UnixNano() >= at {
		s.steadyAck = append(s.steadyAck, ack)
		s.steadyTurn = append(s.steadyTurn, turn)
	}
	if s.warmup > 0 && sent.Sub(s.start) >= s.warmup {
		s.lateAck = append(s.lateAck, ack)
		s.lateTurn = append(s.lateTurn, turn)
	}
	s.mu.Unlock()
	if first && s.warmedUp.Add(1) == s.seats {
		s.warmAt.Store(time.Now().UnixNano())
	}
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

func (s *stats) report(out io.Writer, elapsed time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	slices.Sort(s.ack)
	slices.Sort(s.turn)
	fmt.Fprintf(out, "  %d actions in %s: %.0f actions/s, %d fights, %d refused (busy/not your turn)\n",
		s.acts.Load(), elapsed.Round(time.Millisecond), float64(s.acts.Load())/elapsed.Seconds(), s.fights.Load(), s.refusals.Load())
	fmt.Fprintf(out, "  ack latency   p50 %-9s p90 %-9s p99 %-9s max %s\n", pct(s.ack, .5), pct(s.ack, .9), pct(s.ack, .99), pct(s.ack, 1))
	fmt.Fprintf(out, "  turn latency  p50 %-9s p90 %-9s p99 %-9s max %s  (act sent → its narration)\n", pct(s.turn, .5), pct(s.turn, .9), pct(s.turn, .99), pct(s.turn, 1))
	slices.Sort(s.steadyAck)
	slices.Sort(s.steadyTurn)
	fmt.Fprintf(out, "  of the %d actions sent once all %d bots had one narrated: ack p50 %s p99 %s, turn p50 %s p99 %s\n",
		len(s.steadyAck), s.seats, pct(s.steadyAck, .5), pct(s.steadyAck, .99), pct(s.steadyTurn, .5), pct(s.steadyTurn, .99))
	if s.warmup > 0 {
		slices.Sort(s.lateAck)
		slices.Sort(s.lateTurn)
		fmt.Fprintf(out, "  of the %d actions sent %s or more after the start (-warmup): ack p50 %s p90 %s p99 %s, turn p50 %s p90 %s p99 %s\n",
			len(s.lateAck), s.warmup, pct(s.lateAck, .5), pct(s.lateAck, .9), pct(s.lateAck, .99), pct(s.lateTurn, .5), pct(s.lateTurn, .9), pct(s.lateTurn, .99))
	}
	fmt.Fprintf(out, "  events delivered to clients: %d (%.0f/s), narration deltas: %d\n", s.events.Load(), float64(s.events.Load())/elapsed.Seconds(), s.deltas.Load())
	fmt.Fprintf(out, "  failures: %d\n", s.failures.Load())
}

// per formats seconds of CPU divided by n things.
func per(cpu float64, n int64) string {
	if n == 0 {
		return "-"
	}
	return (time.Duration(cpu * float64(time.Second) / float64(n))).Round(time.Microsecond / 10).String()
}
