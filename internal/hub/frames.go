package hub

import (
	"encoding/json"
	"fmt"
	"time"

	"tavern/internal/engine"
)

// Frames are encoded with encoding/json. Where a frame was once a map,
// its struct lists the fields in the map's sorted key order, so the bytes
// on the wire are the same (frames_test.go holds them to it).

func mustFrame(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// ackFrame is PROTOCOL.md's ack frame.
func ackFrame(id, status string) []byte {
	return mustFrame(struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Type   string `json:"type"`
	}{id, status, "ack"})
}

// pongFrame is PROTOCOL.md's pong frame.
func pongFrame(id string) []byte {
	return mustFrame(struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}{id, "pong"})
}

// errorFrame is PROTOCOL.md's error frame; an empty id is left out.
func errorFrame(id, code, msg string) []byte {
	return mustFrame(struct {
		Code    string `json:"code"`
		ID      string `json:"id,omitempty"`
		Message string `json:"message"`
		Type    string `json:"type"`
	}{code, id, msg, "error"})
}

// narrationDeltaFrame is PROTOCOL.md's narration_delta frame.
func narrationDeltaFrame(turnID, text string) []byte {
	return mustFrame(struct {
		Text string `json:"text"`
		Turn string `json:"turn"`
		Type string `json:"type"`
	}{text, turnID, "narration_delta"})
}

// eventFrame is PROTOCOL.md's event frame of e.
func eventFrame(e engine.Event) []byte { return eventFrameOf(e, mustFrame(e.Data)) }

// eventFrameOf is the event frame of e, whose data is already JSON: the
// table encodes it once, for the store's row and the frame. The fields
// are engine.Event's, in its order.
func eventFrameOf(e engine.Event, data json.RawMessage) []byte {
	return mustFrame(struct {
		Type string          `json:"type"`
		Seq  int64           `json:"seq"`
		TS   time.Time       `json:"ts"`
		Kind engine.Kind     `json:"kind"`
		Turn string          `json:"turn,omitempty"`
		Data json.RawMessage `json:"data"`
	}{"event", e.Seq, e.TS, e.Kind, e.Turn, data})
}

// eventData encodes the data of each of evs, in order.
func eventData(evs []engine.Event) ([]json.RawMessage, error) {
	if len(evs) == 0 {
		return nil, nil
	}
	out := make([]json.RawMessage, len(evs))
	for i, e := range evs {
		data, err := json.Marshal(e.Data)
		if err != nil {
			return nil, fmt.Errorf("encode event %s: %w", e.Kind, err)
		}
		out[i] = data
	}
	return out, nil
}

func snapshotFrame(s Snapshot) []byte {
	return mustFrame(struct {
		Type string `json:"type"`
		Snapshot
	}{"snapshot", s})
}

// stateFrame is PROTOCOL.md's state frame: the snapshot's fields but
// recent (the client has those events as frames).
func stateFrame(s Snapshot) []byte {
	s.Recent = []engine.Event{}
	return mustFrame(struct {
		Type string `json:"type"`
		Snapshot
	}{"state", s})
}

// inFrame is a client's frame (PROTOCOL.md "Client → server").
type inFrame struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Text string `json:"text"`
}
