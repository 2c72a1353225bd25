package adventures

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// Store keeps the adventures players write and the copy each table keeps.
// internal/db satisfies it. Errors are *engine.Error where the method says.
type Store interface {
	// CreateAdventure: ECONFLICT if the id is taken.
	CreateAdventure(ctx context.Context, a store.Adventure) error
	// ReplaceAdventure and HideAdventure: ENOTFOUND if there is none.
	ReplaceAdventure(ctx context.Context, a store.Adventure) error
	HideAdventure(ctx context.Context, id string) error
	// Adventure returns one, hidden or not; ENOTFOUND if there is none.
	Adventure(ctx context.Context, id string) (store.Adventure, error)
	// Adventures lists those not hidden, oldest first.
	Adventures(ctx context.Context) ([]store.Adventure, error)
	// AdventureTables counts the tables made from each adventure, by
	// id; AdventureTableCount those of one.
	AdventureTables(ctx context.Context) (map[string]int, error)
	AdventureTableCount(ctx context.Context, id string) (int, error)
	KeepTableAdventure(ctx context.Context, tableID, adventureID string, source []byte) error
	// TableAdventure: ENOTFOUND if no copy was kept.
	TableAdventure(ctx context.Context, tableID string) (string, []byte, error)
}

// Shelf is every adventure a table can be made from: the built-in ones,
// then the community's (PROTOCOL.md "Adventures"). It satisfies the hub's
// Adventures. Safe for concurrent use.
type Shelf struct {
	// MaxAge is how long the shelf trusts what it read of the community's
	// adventures: on several nodes another node publishes, replaces and
	// hides them. 0: until the shelf changes one itself (one server).
	MaxAge time.Duration

	lib   *Library
	store Store
	now   func() time.Time

	mu     sync.Mutex
	parsed map[string]parsed // by id
	ids    []string          // nil: not known
	idsAt  time.Time
	tables map[string]*engine.Adventure
}

// parsed is an adventure as read at at, last updated at updated.
type parsed struct {
	a           *engine.Adventure
	updated, at time.Time
}

// fresh says whether what was read at at may still be trusted.
func (s *Shelf) fresh(at time.Time) bool {
	return s.MaxAge <= 0 || s.now().Sub(at) < s.MaxAge
}

// NewShelf returns the shelf of lib's built-in adventures and those st
// keeps. now is its clock (nil: time.Now).
func NewShelf(lib *Library, st Store, now func() time.Time) *Shelf {
	if now == nil {
		now = time.Now
	}
	return &Shelf{lib: lib, store: st, now: now, parsed: map[string]parsed{}, tables: map[string]*engine.Adventure{}}
}

// Library is the built-in adventures and the catalogue.
func (s *Shelf) Library() *Library { return s.lib }

// Entry is an adventure as listed (PROTOCOL.md "GET /api/adventures").
type Entry struct {
	ID         string `json:"id"`
	Title      string `json:"title"`
	Summary    string `json:"summary"`
	Author     string `json:"author,omitempty"`
	AuthorID   string `json:"author_id,omitempty"`
	BuiltIn    bool   `json:"built_in"`
	Tables     int    `json:"tables"`
	ForkedFrom string `json:"forked_from,omitempty"`
	Hidden     bool   `json:"hidden,omitempty"`
	Source     string `json:"source,omitempty"`
}

// List returns the built-in adventures, then the community's oldest first,
// each with the number of tables made from it.
func (s *Shelf) List(ctx context.Context) ([]Entry, error) {
	counts, err := s.store.AdventureTables(ctx)
	if err != nil {
		return nil, err
	}
	out, err := s.Titles(ctx)
	for i := range out {
		out[i].Tables = counts[out[i].ID]
	}
	return out, err
}

// Titles is List without the numbers of tables (Tables is 0): what a
// choice of adventure needs, such as the lobby's form, which then counts
// nothing.
func (s *Shelf) Titles(ctx context.Context) ([]Entry, error) {
	var out []Entry
	// The default adventure, a first evening, leads: the lobby's form
	// picks the first one.
	ids := s.lib.IDs()
	if i := slices.Index(ids, Default); i > 0 {
		ids = append(append([]string{Default}, ids[:i]...), ids[i+1:]...)
	}
	for _, id := range ids {
		a, _ := s.lib.Get(id)
		out = append(out, Entry{ID: id, Title: a.Name, Summary: a.Summary, BuiltIn: true})
	}
	stored, err := s.store.Adventures(ctx)
	if err != nil {
		return nil, err
	}
	for _, a := range stored {
		e := entryOf(a)
		e.Source = ""
		out = append(out, e)
	}
	return out, nil
}

func entryOf(a store.Adventure) Entry {
	return Entry{ID: a.ID, Title: a.Title, Summary: a.Summary, Author: a.AuthorName, AuthorID: a.AuthorID,
		ForkedFrom: a.ForkedFrom, Hidden: a.Hidden, Source: string(a.Source)}
}

// Entry returns one adventure with its source; a hidden one too (its
// author may show it again by replacing it). ENOTFOUND if there is none.
func (s *Shelf) Entry(ctx context.Context, id string) (Entry, error) {
	var e Entry
	if a, ok := s.lib.Get(id); ok {
		src, _ := s.lib.Source(id)
		e = Entry{ID: id, Title: a.Name, Summary: a.Summary, BuiltIn: true, Source: string(src)}
	} else {
		a, err := s.store.Adventure(ctx, id)
		if err != nil {
			return Entry{}, err
		}
		e = entryOf(a)
	}
	var err error
	e.Tables, err = s.store.AdventureTableCount(ctx, id)
	if err != nil {
		return Entry{}, err
	}
	return e, nil
}

// Validate parses src as an upload would be, and returns its problems.
func (s *Shelf) Validate(src []byte) []Problem {
	_, p := Parse(src, s.lib.Catalogue)
	return p
}

// Create publishes src as a new adventure by author. Its id is the one it
// names if free, else that id with a number. It returns the problems of a
// source that does not validate (and no error).
func (s *Shelf) Create(ctx context.Context, author engine.Player, src []byte, forkedFrom string) (Entry, []Problem, error) {
	a, problems := Parse(src, s.lib.Catalogue)
	if len(problems) > 0 {
		return Entry{}, problems, nil
	}
	now := s.now().UTC()
	rec := store.Adventure{AuthorID: author.ID, AuthorName: author.Name, Title: a.Name, Summary: a.Summary, Source: src,
		ForkedFrom: forkedFrom, CreatedAt: now, UpdatedAt: now}
	for i := 1; ; i++ {
		rec.ID = a.ID
		if i > 1 {
			rec.ID = fmt.Sprintf("%s-%d", a.ID, i)
		}
		if _, builtIn := s.lib.Get(rec.ID); builtIn {
			continue
		}
		err := s.store.CreateAdventure(ctx, rec)
		if engine.ErrorCode(err) == engine.ECONFLICT && i < 100 {
			continue
		}
		s.forget(rec.ID)
		if err != nil {
			return Entry{}, nil, err
		}
		return entryOf(rec), nil, nil
	}
}

// Replace gives adventure id a new source, for new tables; tables made
// from it keep their copy. Only its author may; built-in adventures are
// nobody's (EFORBIDDEN).
func (s *Shelf) Replace(ctx context.Context, p engine.Player, id string, src []byte) (Entry, []Problem, error) {
	rec, err := s.owned(ctx, p, id)
	if err != nil {
		return Entry{}, nil, err
	}
	a, problems := Parse(src, s.lib.Catalogue)
	if len(problems) > 0 {
		return Entry{}, problems, nil
	}
	rec.Title, rec.Summary, rec.Source, rec.Hidden, rec.UpdatedAt = a.Name, a.Summary, src, false, s.now().UTC()
	if err := s.store.ReplaceAdventure(ctx, rec); err != nil {
		return Entry{}, nil, err
	}
	s.forget(id)
	return entryOf(rec), nil, nil
}

// Hide takes adventure id off the list and out of new tables; only its
// author may.
func (s *Shelf) Hide(ctx context.Context, p engine.Player, id string) error {
	if _, err := s.owned(ctx, p, id); err != nil {
		return err
	}
	defer s.forget(id)
	return s.store.HideAdventure(ctx, id)
}

// Fork copies a listed adventure (built-in or not) as a new one owned by
// p.
func (s *Shelf) Fork(ctx context.Context, p engine.Player, id string) (Entry, error) {
	e, err := s.Entry(ctx, id)
	if err != nil {
		return Entry{}, err
	}
	if e.Hidden {
		return Entry{}, engine.Errorf(engine.ENOTFOUND, "No adventure %q.", id)
	}
	out, problems, err := s.Create(ctx, p, []byte(e.Source), id)
	if len(problems) > 0 {
		// The catalogue changed under a stored adventure: its author must
		// fix it first.
		return Entry{}, engine.Errorf(engine.EINVALID, "%q no longer validates (%s); it cannot be forked until its author fixes it.", id, problems[0].Message)
	}
	return out, err
}

func (s *Shelf) owned(ctx context.Context, p engine.Player, id string) (store.Adventure, error) {
	if _, ok := s.lib.Get(id); ok {
		return store.Adventure{}, engine.Errorf(engine.EFORBIDDEN, "%q is built in and cannot be changed; fork it to make your own copy.", id)
	}
	rec, err := s.store.Adventure(ctx, id)
	if err != nil {
		return rec, err
	}
	if rec.AuthorID != p.ID {
		return rec, engine.Errorf(engine.EFORBIDDEN, "Only the author of %q may change it; fork it to make your own copy.", id)
	}
	return rec, nil
}

// Get returns the adventure a new table named id is made from: built in,
// or the community's (hidden ones too, for the tables made from them).
// The caller must not modify it.
func (s *Shelf) Get(id string) (*engine.Adventure, bool) {
	if a, ok := s.lib.Get(id); ok {
		return a, true
	}
	// The shelf forgets what it changes (forget), so a parsed adventure
	// is good until then, or MaxAge: the lobby names every table's
	// adventure.
	s.mu.Lock()
	p, ok := s.parsed[id]
	s.mu.Unlock()
	if ok && s.fresh(p.at) {
		return p.a, true
	}
	at := s.now()
	rec, err := s.store.Adventure(context.Background(), id)
	if err != nil {
		if ok && engine.ErrorCode(err) != engine.ENOTFOUND {
			return p.a, true // the store out of reach: what was read last
		}
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ok && rec.UpdatedAt.Equal(p.updated) {
		s.parsed[id] = parsed{a: p.a, updated: p.updated, at: at}
		return p.a, true
	}
	a, problems := Parse(rec.Source, s.lib.Catalogue)
	if len(problems) > 0 {
		return nil, false
	}
	a.ID = id
	if len(s.parsed) > 1000 {
		clear(s.parsed)
	}
	s.parsed[id] = parsed{a: a, updated: rec.UpdatedAt, at: at}
	return a, true
}

// IDs lists the adventures new tables may name: built in, then listed.
func (s *Shelf) IDs() []string {
	s.mu.Lock()
	ids, idsAt := s.ids, s.idsAt
	s.mu.Unlock()
	if ids != nil && s.fresh(idsAt) {
		return ids
	}
	at := s.now()
	ids = s.lib.IDs()
	stored, err := s.store.Adventures(context.Background())
	if err != nil {
		return ids
	}
	for _, a := range stored {
		ids = append(ids, a.ID)
	}
	ids = slices.Clip(ids)
	s.mu.Lock()
	s.ids, s.idsAt = ids, at
	s.mu.Unlock()
	return ids
}

// forget drops what the shelf remembers of adventure id once it changed.
func (s *Shelf) forget(id string) {
	s.mu.Lock()
	delete(s.parsed, id)
	s.ids = nil
	s.mu.Unlock()
}

// Keep stores the copy of adventure id that table tableID was made from,
// when it is one players wrote: those change whenever their author
// replaces them. A built-in one changes only with a release, and the
// table's world is its own already (in its state): its copy would be one
// more write for every table made.
func (s *Shelf) Keep(ctx context.Context, tableID, id string) error {
	if _, builtIn := s.lib.Get(id); builtIn {
		return nil
	}
	rec, err := s.store.Adventure(ctx, id)
	if err != nil {
		return err
	}
	return s.store.KeepTableAdventure(ctx, tableID, id, rec.Source)
}

// ForTable returns the copy of the adventure table tableID was made from
// (adventure id when no copy was kept: a table older than the copies).
// The caller must not modify it.
func (s *Shelf) ForTable(tableID, id string) (*engine.Adventure, bool) {
	// No copy of a built-in adventure is kept (it changes only with a
	// release): every turn asks, and the store must not be read for it.
	if a, ok := s.lib.Get(id); ok {
		return a, true
	}
	s.mu.Lock()
	a, ok := s.tables[tableID]
	s.mu.Unlock()
	if ok {
		return a, true
	}
	advID, src, err := s.store.TableAdventure(context.Background(), tableID)
	if err != nil {
		return s.Get(id)
	}
	a, problems := Parse(src, s.lib.Catalogue)
	if len(problems) > 0 {
		return s.Get(id)
	}
	a.ID = advID
	s.mu.Lock()
	if len(s.tables) > 1000 {
		clear(s.tables)
	}
	s.tables[tableID] = a
	s.mu.Unlock()
	return a, true
}
