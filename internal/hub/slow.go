package hub

import (
	"context"
	"errors"
	"fmt"
	"time"

	"tavern/internal/engine"
)

// A model that is slow or hangs is told, bounded and cleaned up after:
//
//   - a turn whose first attempt has streamed nothing after SlowAfter tells
//     the table so (a `system` event, code CodeSlow), once;
//   - every attempt at a turn runs under AttemptDeadline, its model calls
//     and their retries together, so an action is given up after its
//     attempts within a known time;
//   - the narration an attempt streamed before it failed is withdrawn: a
//     `narration_withdrawn` frame tells clients to drop it, so the next
//     attempt's text is not shown after it (twice, or two versions).

// CodeSlow is the code of the `system` event that tells a table the DM is
// slow to answer.
const CodeSlow = "slow"

// watchSlow arms the notice of j: the first attempt at a turn that has
// streamed nothing after SlowAfter is told to the table. Runs on the table
// goroutine. The model's pace is wall-clock time, not the table's clock
// (Config.AfterFunc, which tests drive), and finish stops the timer.
func (t *table) watchSlow(j *job) {
	d := t.h.cfg.SlowAfter
	if d <= 0 || !t.firstAttempt(j) {
		return
	}
	j.slow = time.AfterFunc(d, func() {
		t.postSystem(func() {
			if t.job != j || j.deltas.streamed() {
				return
			}
			data := engine.SystemData{Code: CodeSlow,
				Message: fmt.Sprintf("The DM is slow to answer (nothing after %s); still trying.", d.Round(time.Second))}
			if j.action != nil {
				data.ActionID = j.action.ID
			}
			t.tell(context.Background(), engine.NewEvent(data), j.turnNo)
		})
	})
}

// firstAttempt reports whether j is the first attempt at its turn.
func (t *table) firstAttempt(j *job) bool {
	if j.action != nil {
		return t.acts.attempts[j.action.ID] == 0
	}
	return t.acts.dmFailures[j.kind] == 0
}

// attemptContext bounds one attempt at a turn (AttemptDeadline; 0: only
// ctx).
func (t *table) attemptContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if d := t.h.cfg.AttemptDeadline; d > 0 {
		return context.WithTimeoutCause(ctx, d, fmt.Errorf("%w (%s)", errAttemptDeadline, d))
	}
	return context.WithCancel(ctx)
}

// errAttemptDeadline ends an attempt at a turn that ran out of its time.
var errAttemptDeadline = errors.New("the DM did not answer in time")

// timedOut reports whether err ended an attempt at its deadline.
func timedOut(err error) bool {
	return errors.Is(err, errAttemptDeadline) || errors.Is(err, context.DeadlineExceeded)
}

// narrationWithdrawnFrame tells clients to drop the narration streamed for
// turn turnID (narration_delta frames): the attempt that wrote it failed.
func narrationWithdrawnFrame(turnID string) []byte {
	return mustFrame(struct {
		Turn string `json:"turn"`
		Type string `json:"type"`
	}{turnID, "narration_withdrawn"})
}
