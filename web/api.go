package web

import (
	"bytes"
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

	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/ident"
)

// maxBody bounds every JSON request body.
const maxBody = 64 << 10

// Page size of the lists other than the event log (calls); the event log
// pages by hub.DefaultEventsPage and hub.MaxEventsPage.
const (
	defaultLimit = 100
	maxLimit     = 500
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
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return badRequest("The request body could not be read.")
	}
	// encoding/json would replace invalid UTF-8 and lone surrogates with
	// U+FFFD silently: a name or text is stored as sent or refused.
	if err := engine.CheckJSON(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
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

// tableID returns the {id} path value, checked for shape so that junk
// never reaches the hub or the logs.
func tableID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if id == "" || len(id) > 64 || strings.ContainsFunc(id, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z'))
	}) {
		return "", &apiError{code: hub.CodeNotFound, message: "No such table."}
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
	name, err := engine.CleanName("name", req.Name, engine.MaxNameLen)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if s.allow(w, r, s.playerQuota, "players") == nil {
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
	// Next is the cursor of the following page; only paged requests
	// (?limit= or ?cursor=) get it, and only when there is more.
	Next string `json:"next,omitempty"`
}

// listTables is GET /api/tables: every table, newest first. With ?limit=
// (1..maxLimit) or ?cursor= it pages (additive): a page of at most limit
// tables (default defaultLimit) after the table named by cursor, and next
// when more follow. Without them the answer is the whole list, as before.
func (s *Server) listTables(w http.ResponseWriter, r *http.Request) {
	v, _, err := s.viewer(r, false)
	if err != nil {
		s.error(w, r, err)
		return
	}
	ts := s.hub.ListFor(r.Context(), v.PlayerID)
	if ts == nil {
		ts = []hub.TableSummary{}
	}
	q := r.URL.Query()
	if !q.Has("limit") && !q.Has("cursor") {
		writeJSON(w, http.StatusOK, tablesResponse{Tables: ts})
		return
	}
	limit, err := intParam(q.Get("limit"), defaultLimit, 1, maxLimit)
	if err != nil {
		s.error(w, r, badRequest(fmt.Sprintf("limit must be between 1 and %d.", maxLimit)))
		return
	}
	start := 0
	if cur := q.Get("cursor"); cur != "" {
		// The cursor is the id of the last table of the previous page, so
		// tables created meanwhile (at the front) do not shift the pages.
		i := slices.IndexFunc(ts, func(t hub.TableSummary) bool { return t.ID == cur })
		if i < 0 {
			s.error(w, r, badRequest("Unknown cursor; start again without one."))
			return
		}
		start = i + 1
	}
	page := ts[start:min(len(ts), start+int(limit))]
	res := tablesResponse{Tables: page}
	if start+len(page) < len(ts) && len(page) > 0 {
		res.Next = page[len(page)-1].ID
	}
	writeJSON(w, http.StatusOK, res)
}

type createTableRequest struct {
	Name         string `json:"name"`
	Adventure    string `json:"adventure"`
	Ruleset      string `json:"ruleset"`
	CombatMode   string `json:"combat_mode"`
	Seats        *int   `json:"seats"`
	TurnTimeoutS *int   `json:"turn_timeout_s"`
	Private      bool   `json:"private"`
	NPCHP        string `json:"npc_hp"`
}

// createTable is POST /api/tables.
func (s *Server) createTable(w http.ResponseWriter, r *http.Request, p engine.Player) {
	var req createTableRequest
	if err := decode(w, r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	refund := s.allow(w, r, s.tableQuota, "tables")
	if refund == nil {
		return
	}
	// The hub validates the spec (engine.TableSpec.Validate).
	spec := hub.TableSpec{Name: req.Name, Adventure: req.Adventure, Ruleset: req.Ruleset, CombatMode: req.CombatMode,
		Seats: req.Seats, TurnTimeoutS: req.TurnTimeoutS, Private: req.Private, NPCHP: req.NPCHP}
	t, err := s.hub.CreateTable(r.Context(), p, spec)
	if err != nil {
		if engine.ErrorCode(err) == engine.EINVALID {
			refund()
		}
		s.error(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/tables/"+t.ID)
	writeJSON(w, http.StatusCreated, t)
}

// getTable is GET /api/tables/{id}.
func (s *Server) getTable(w http.ResponseWriter, r *http.Request) {
	id, ok := s.visibleTable(w, r)
	if !ok {
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
	// Invite is a private table's current invite code.
	Invite string `json:"invite"`
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
	// The hub validates the character (engine.NewCharacterSpec.Validate).
	spec := engine.NewCharacterSpec{Name: req.Character.Name, Class: req.Character.Class, Backstory: req.Character.Backstory}
	c, err := s.hub.SitInvited(r.Context(), id, p, spec, req.Invite)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, sitResponse{Seat: c.Seat, Character: c})
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
	// Limit is the page size used, when a larger one was asked for and
	// clamped to the maximum.
	Limit int64 `json:"limit,omitempty"`
}

// events is GET /api/tables/{id}/events?since=&limit=.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	id, ok := s.visibleTable(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	since, err := intParam(q.Get("since"), 0, 0, 1<<62)
	if err != nil {
		s.error(w, r, badRequest("since must be a non-negative integer."))
		return
	}
	// A limit above the maximum is clamped to it (as most paginated APIs
	// do), and the response says so; `next` then pages on from there.
	limit, err := intParam(q.Get("limit"), hub.DefaultEventsPage, 1, 1<<62)
	if err != nil {
		s.error(w, r, badRequest(fmt.Sprintf("limit must be between 1 and %d.", hub.MaxEventsPage)))
		return
	}
	var clamped int64
	if limit > hub.MaxEventsPage {
		limit, clamped = hub.MaxEventsPage, hub.MaxEventsPage
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
	writeJSON(w, http.StatusOK, eventsResponse{Events: evs, Next: next, Limit: clamped})
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
