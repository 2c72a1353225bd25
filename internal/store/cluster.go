package store

import "errors"

// ErrFenced fails a commit of a table this node no longer owns
// (DESIGN.md "Beyond one machine": another node claimed it, with a higher
// epoch). Nothing of the commit was written; the table must unload
// without reloading, and its sockets close 1012 so that clients reconnect
// to the owner.
var ErrFenced = errors.New("store: this node no longer owns the table; not applied")

// ErrNotOwner fails the load of a table another live node owns: the
// request belongs there (PROTOCOL.md "Several nodes").
var ErrNotOwner = errors.New("store: another node owns the table")
