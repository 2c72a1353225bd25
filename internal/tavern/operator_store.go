package tavern

import (
	"context"
	"time"

	"tavern/internal/store"
)

// operatorStore is what the operator's services (operator, loadBudget,
// alerts) need of the store: *db.DB and *pgdb.DB both are one.
type operatorStore interface {
	SpendSince(ctx context.Context, since time.Time) ([]store.Spend, error)
	TableBudgets(ctx context.Context) ([]store.TableBudget, error)
	SetTableBudget(ctx context.Context, tableID string, usd float64, by string) error
	SearchPlayers(ctx context.Context, q string, limit int) ([]store.PlayerRow, error)
	PlayerDetail(ctx context.Context, id string) (store.PlayerDetail, error)
	SetPlayerBan(ctx context.Context, id string, banned bool, reason string) error
	ExportPlayer(ctx context.Context, id string) (store.PlayerExport, error)
	ErasePlayer(ctx context.Context, id string) error
	CreateConsoleUser(ctx context.Context, u store.ConsoleUser, tokenHash []byte) error
	ConsoleUsers(ctx context.Context) ([]store.ConsoleUser, error)
	ConsoleUserByTokenHash(ctx context.Context, hash []byte) (store.ConsoleUser, error)
	RevokeConsoleUser(ctx context.Context, id string) error
	TableAccess(ctx context.Context, tableID string) (store.Access, error)
	AllHistory(ctx context.Context, tableID, agentName string) ([]store.AgentMessage, error)
	alertStore
}
