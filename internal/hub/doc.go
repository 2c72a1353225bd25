// Package hub runs tables as actors: one goroutine per table owns its state
// (Nakama's match handler); websocket clients, HTTP handlers and turn jobs
// talk to it by posting commands to its bounded queues, one for players and
// one for the system (turn results, timers, the operator).
//
// Start with [Hub] ([New], [Hub.Start]) and then table.go, the mailbox;
// actions.go is the action lifecycle and scheduler.go picks the next turn.
// act.go and turn.go show how an action is accepted (written durably as a
// pending action, acknowledged, broadcast), how a turn job runs outside
// the table goroutine on a copy of the state, and how its result is
// committed in ONE store transaction before anything is broadcast. client.go is the websocket side of PROTOCOL.md.
// notes.go, whisper.go and retcon.go are PROTOCOL.md's "Undo, notes and the
// owner's word to the DM": the table's notes, the owner's whispers, edits and
// feedback, and the save points each action turn commits so a retcon can go
// back to them.
package hub
