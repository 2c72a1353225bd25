package web_test

import (
	"context"
	"net/http"
	"testing"
)

// A retcon takes the story back, not the owner's settings: a table the
// owner switched to npc_hp "words" after the undone turn keeps hiding NPC
// numbers (the table's state, from which the redaction and the turn timer
// read their settings, agrees with its summary), also after a restart.
func TestRetconKeepsTheOwnersSettings(t *testing.T) {
	e := newTestEnv(t)
	_, owner := e.newPlayer("Owner")
	_, ann := e.newPlayer("Ann")
	r := e.do("POST", "/api/tables", map[string]any{"name": "Undo"}, owner)
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	id := r.json(t)["id"].(string)
	e.seat(id, ann, "Aldric")
	if r := e.do("PATCH", "/api/tables/"+id, map[string]any{"npc_hp": "words", "turn_timeout_s": 45}, owner); r.status != http.StatusOK {
		t.Fatalf("patch: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/api/tables/"+id+"/retcon", map[string]any{"then": "drop"}, owner); r.status != http.StatusOK {
		t.Fatalf("retcon: %d %s", r.status, r.body)
	}
	sum := obj(t, e.do("GET", "/api/tables/"+id, nil, ann).json(t)["table"], "table")
	if sum["npc_hp"] != "words" || sum["turn_timeout_s"] != float64(45) {
		t.Errorf("summary after the retcon = %v", sum)
	}
	d, err := e.store.LoadTable(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if c := d.State.Config; c.NPCHP != "words" || c.TurnTimeoutS != 45 {
		t.Errorf("the state after the retcon has the settings %+v, want words and 45 s", c)
	}
}
