package web

import (
	"context"
	"strings"

	"tavern/internal/hub"
)

// Names the external tests (package web_test) need, exported for tests
// only.

// Cookie names, as the tests send them back.
const (
	AdminCookie = adminCookie
	CookieName  = cookieName
)

// AdminTryBurst is how many wrong admin tokens an address may send at once.
const AdminTryBurst = adminTryBurst

// Bodies the handlers write, as the tests decode them.
type (
	ErrorBody        = hub.ErrorBody
	MemoriesResponse = memoriesResponse
	CallsResponse    = callsResponse
)

// Tables is the part of the hub the handlers use: a test's fake embeds
// it to fail one call.
type Tables = tables

// NewOn is New on any Tables, such as a fake that fails.
func NewOn(t Tables, cfg Config) *Server { return newServer(t, cfg) }

// TableView is what the table page shows.
type TableView = tableView

// RenderTablePage renders the table page for v.
func RenderTablePage(v TableView) (string, error) {
	var b strings.Builder
	err := tablePage(v).Render(context.Background(), &b)
	return b.String(), err
}
