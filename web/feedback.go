package web

import (
	"context"
	"strconv"
	"time"

	"tavern/internal/store"
)

// orNone shows "" as "(unknown)": a score on a narration no logged call
// made (the adventure's opening, the offline narrator without a log).
func orNone(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// liked is the share of thumbs up among a group's scores, in percent.
func liked(g store.FeedbackGroup) string {
	n := g.Up + g.Down
	if n == 0 {
		return "–"
	}
	return strconv.Itoa(g.Up*100/n) + " %"
}

// feedbackSince returns the players' scores since since, grouped, or nil
// if the store fails (logged; the LLM page shows the rest).
func (s *Server) feedbackSince(ctx context.Context, since time.Time) []store.FeedbackGroup {
	gs, err := s.hub.FeedbackGroups(ctx, since)
	if err != nil {
		s.log.Warn("feedback scores not read", "err", err)
		return nil
	}
	return gs
}
