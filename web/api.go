package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/ident"
)

// maxBody bounds every JSON request body.
const maxBody = 64 << 10

// Field limits (PROTOCOL.md "Identity" for names).
const (
	maxNameLen      = 32
	maxTableNameLen = 64
	maxBackstoryLen = 2000
	maxSeats        = 8
	maxTurnTimeoutS = 3600
	defaultLimit    = 100
	maxLimit        = 500
)

// decode reads one JSON object from r's body into v: the body must be at
// most maxBody bytes, JSON (or untyped), and hold exactly one value with
// only known fields.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return badRequest("Content-Type must be application/json.")
		}
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		if errors.Is(err, io.EOF) {
			return badRequest("The request body is empty; want a JSON object.")
		}
		return badRequest("Invalid JSON body: " + jsonProblem(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badRequest("Invalid JSON body: want a single JSON object.")
	}
	return nil
}

// jsonProblem describes a decoding error without echoing Go type names.
func jsonProblem(err error) string {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		if ute.Field != "" {
			return fmt.Sprintf("field %q has the wrong type.", ute.Field)
		}
		return "want a JSON object."
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("syntax error at byte %d.", se.Offset)
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return "unknown field " + f + "."
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of input."
	}
	return "malformed."
}

// cleanName trims s and checks it is 1..max characters without control
// characters. what names the field in the error message.
func cleanName(what, s string, max int) (string, error) {
	s = strings.TrimSpace(s)
	n := utf8.RuneCountInString(s)
	switch {
	case !utf8.ValidString(s):
		return "", badRequest(what + " must be valid UTF-8.")
	case n == 0:
		return "", badRequest(what + " must not be empty.")
	case n > max:
		return "", badRequest(fmt.Sprintf("%s must be at most %d characters.", what, max))
	case strings.ContainsFunc(s, unicode.IsControl):
		return "", badRequest(what + " must not contain control characters.")
	}
	return s, nil
}

// cleanText checks free text: at most max characters, no control
// characters other than newlines and tabs.
func cleanText(what, s string, max int) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case !utf8.ValidString(s):
		return "", badRequest(what + " must be valid UTF-8.")
	case utf8.RuneCountInString(s) > max:
		return "", badRequest(fmt.Sprintf("%s must be at most %d characters.", what, max))
	case strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }):
		return "", badRequest(what + " must not contain control characters.")
	}
	return s, nil
}

// tableID returns the {id} path value, checked for shape so that junk
// never reaches the hub or the logs.
func tableID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if id == "" || len(id) > 64 || strings.ContainsFunc(id, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z'))
	}) {
		return "", &apiError{status: http.StatusNotFound, code: hub.CodeNotFound, message: "No such table."}
	}
	return id, nil
}

// --- players ---

type createPlayerRequest struct {
	Name string `json:"name"`
}

type createPlayerResponse struct {
	PlayerID string `json:"player_id"`
	Name     string `json:"name"`
	Token    string `json:"token"`
}

// createPlayer is POST /api/players.
func (s *Server) createPlayer(w http.ResponseWriter, r *http.Request) {
	var req createPlayerRequest
	if err := decode(w, r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	name, err := cleanName("name", req.Name, maxNameLen)
	if err != nil {
		s.error(w, r, err)
		return
	}
	token := ident.Token()
	p := engine.Player{ID: ident.New("p_"), Name: name, CreatedAt: time.Now().UTC()}
	if err := s.players.CreatePlayer(r.Context(), p, hashToken(token)); err != nil {
		s.error(w, r, err)
		return
	}
	setPlayerCookie(w, r, token)
	writeJSON(w, http.StatusCreated, createPlayerResponse{PlayerID: p.ID, Name: p.Name, Token: token})
}

type meResponse struct {
	PlayerID string `json:"player_id"`
	Name     string `json:"name"`
}

// me is GET /api/players/me (additive): who the token belongs to.
func (s *Server) me(w http.ResponseWriter, r *http.Request, p engine.Player) {
	writeJSON(w, http.StatusOK, meResponse{PlayerID: p.ID, Name: p.Name})
}

// --- tables ---

type tablesResponse struct {
	Tables []hub.TableSummary `json:"tables"`
}

// listTables is GET /api/tables.
func (s *Server) listTables(w http.ResponseWriter, r *http.Request) {
	ts := s.hub.List()
	if ts == nil {
		ts = []hub.TableSummary{}
	}
	writeJSON(w, http.StatusOK, tablesResponse{Tables: ts})
}

type createTableRequest struct {
	Name         string `json:"name"`
	Adventure    string `json:"adventure"`
	Ruleset      string `json:"ruleset"`
	CombatMode   string `json:"combat_mode"`
	Seats        *int   `json:"seats"`
	TurnTimeoutS *int   `json:"turn_timeout_s"`
}

// tableSpec validates req and fills in the defaults of PROTOCOL.md.
func (s *Server) tableSpec(req createTableRequest) (hub.TableSpec, error) {
	name, err := cleanName("name", req.Name, maxTableNameLen)
	if err != nil {
		return hub.TableSpec{}, err
	}
	spec := hub.TableSpec{Name: name, Adventure: req.Adventure, Ruleset: req.Ruleset, CombatMode: req.CombatMode, Seats: 4, TurnTimeoutS: req.TurnTimeoutS}
	// An empty adventure is the hub's default (the built-in one).
	if ids := s.hub.AdventureIDs(); spec.Adventure != "" && !slices.Contains(ids, spec.Adventure) {
		return spec, badRequest(fmt.Sprintf("Unknown adventure %q; known: %s.", truncate(spec.Adventure, 40), strings.Join(ids, ", ")))
	}
	switch spec.Ruleset {
	case "":
		spec.Ruleset = "d100"
	case "d100", "d20":
	default:
		return spec, badRequest(`ruleset must be "d100" or "d20".`)
	}
	switch spec.CombatMode {
	case "":
		spec.CombatMode = "tactical"
	case "tactical", "narrative":
	default:
		return spec, badRequest(`combat_mode must be "tactical" or "narrative".`)
	}
	if req.Seats != nil {
		if *req.Seats < 1 || *req.Seats > maxSeats {
			return spec, badRequest(fmt.Sprintf("seats must be between 1 and %d.", maxSeats))
		}
		spec.Seats = *req.Seats
	}
	if t := req.TurnTimeoutS; t != nil && (*t < 0 || *t > maxTurnTimeoutS) {
		return spec, badRequest(fmt.Sprintf("turn_timeout_s must be between 0 and %d.", maxTurnTimeoutS))
	}
	return spec, nil
}

// createTable is POST /api/tables.
func (s *Server) createTable(w http.ResponseWriter, r *http.Request, p engine.Player) {
	var req createTableRequest
	if err := decode(w, r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	spec, err := s.tableSpec(req)
	if err != nil {
		s.error(w, r, err)
		return
	}
	t, err := s.hub.CreateTable(r.Context(), p, spec)
	if err != nil {
		s.error(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/tables/"+t.ID)
	writeJSON(w, http.StatusCreated, t)
}

// getTable is GET /api/tables/{id}.
func (s *Server) getTable(w http.ResponseWriter, r *http.Request) {
	id, err := tableID(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	snap, err := s.hub.Snapshot(r.Context(), id)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, snap)
}

type sitRequest struct {
	Character *characterRequest `json:"character"`
}

type characterRequest struct {
	Name      string `json:"name"`
	Class     string `json:"class"`
	Backstory string `json:"backstory"`
}

type sitResponse struct {
	Seat      string        `json:"seat"`
	Character hub.Character `json:"character"`
}

// sit is POST /api/tables/{id}/seats.
func (s *Server) sit(w http.ResponseWriter, r *http.Request, p engine.Player) {
	id, err := tableID(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	var req sitRequest
	if err := decode(w, r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	if req.Character == nil {
		s.error(w, r, badRequest(`Missing "character": {"name", "class"?, "backstory"?}.`))
		return
	}
	spec, err := s.characterSpec(*req.Character)
	if err != nil {
		s.error(w, r, err)
		return
	}
	c, err := s.hub.Sit(r.Context(), id, p, spec)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, sitResponse{Seat: c.Seat, Character: c})
}

// characterSpec validates a new character.
func (s *Server) characterSpec(c characterRequest) (engine.NewCharacterSpec, error) {
	name, err := cleanName("character name", c.Name, maxNameLen)
	if err != nil {
		return engine.NewCharacterSpec{}, err
	}
	back, err := cleanText("backstory", c.Backstory, maxBackstoryLen)
	if err != nil {
		return engine.NewCharacterSpec{}, err
	}
	class := strings.TrimSpace(c.Class)
	if classes := s.hub.Classes(); class != "" && len(classes) > 0 {
		var ids []string
		ok := false
		for _, cl := range classes {
			ids = append(ids, cl.ID)
			ok = ok || cl.ID == class
		}
		if !ok {
			return engine.NewCharacterSpec{}, badRequest(fmt.Sprintf("Unknown class %q; pick one of: %s.", truncate(class, 40), strings.Join(ids, ", ")))
		}
	}
	return engine.NewCharacterSpec{Name: name, Class: class, Backstory: back}, nil
}

// leave is DELETE /api/tables/{id}/seats/me.
func (s *Server) leave(w http.ResponseWriter, r *http.Request, p engine.Player) {
	id, err := tableID(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if err := s.hub.Leave(r.Context(), id, p); err != nil {
		s.error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type eventsResponse struct {
	Events []engine.Event `json:"events"`
	Next   int64          `json:"next"`
}

// events is GET /api/tables/{id}/events?since=&limit=.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	id, err := tableID(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	q := r.URL.Query()
	since, err := intParam(q.Get("since"), 0, 0, 1<<62)
	if err != nil {
		s.error(w, r, badRequest("since must be a non-negative integer."))
		return
	}
	limit, err := intParam(q.Get("limit"), defaultLimit, 1, maxLimit)
	if err != nil {
		s.error(w, r, badRequest(fmt.Sprintf("limit must be between 1 and %d.", maxLimit)))
		return
	}
	evs, err := s.hub.Events(r.Context(), id, since, int(limit))
	if err != nil {
		s.error(w, r, err)
		return
	}
	next := since
	if len(evs) > 0 {
		next = evs[len(evs)-1].Seq
	} else {
		evs = []engine.Event{}
	}
	writeJSON(w, http.StatusOK, eventsResponse{Events: evs, Next: next})
}

// intParam parses an optional integer query parameter in [min, max].
func intParam(s string, def, min, max int64) (int64, error) {
	if s == "" {
		return def, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, err
	}
	if v < min || v > max {
		return 0, fmt.Errorf("%d out of range", v)
	}
	return v, nil
}

// truncate shortens s for an error message.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
