package tavern

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pressly/goose/v3"

	"tavern/internal/db"
	"tavern/migrations"
)

// made is a database file this build made and closed.
func made(t *testing.T) Config {
	t.Helper()
	cfg := testConfig(t)
	d, err := db.Open(context.Background(), cfg.DB)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// refused checks that New refuses cfg's database with want, naming the
// file and what to do about it.
func refused(t *testing.T, cfg Config, want error, fix string) {
	t.Helper()
	tv, err := New(context.Background(), cfg)
	if err == nil {
		tv.Close()
		t.Fatalf("New started on %s", cfg.DB)
	}
	if !errors.Is(err, want) {
		t.Fatalf("New = %v, want %v", err, want)
	}
	if !strings.Contains(err.Error(), cfg.DB) || !strings.Contains(err.Error(), fix) {
		t.Errorf("New = %q, want the file %s and %q named", err, cfg.DB, fix)
	}
}

// sqlite runs stmt on the file at path.
func sqlite(t *testing.T, path, stmt string) {
	t.Helper()
	pool, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(stmt); err != nil {
		t.Fatal(err)
	}
}

// TestNewRefusesStorage: a database this server could not run on stops it
// at start, with what is wrong and the fix, instead of a server that says
// it is ready and fails every read or write.
func TestNewRefusesStorage(t *testing.T) {
	t.Run("not a database", func(t *testing.T) {
		cfg := testConfig(t)
		if err := os.WriteFile(cfg.DB, []byte(strings.Repeat("not a database ", 500)), 0o600); err != nil {
			t.Fatal(err)
		}
		refused(t, cfg, db.ErrDamaged, "restore")
	})
	t.Run("damaged pages", func(t *testing.T) {
		cfg := made(t)
		f, err := os.OpenFile(cfg.DB, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		// Past the header page: the schema's pages and the tables' roots.
		if _, err := f.WriteAt([]byte(strings.Repeat("\xff", 4096*3)), 4096); err != nil {
			t.Fatal(err)
		}
		f.Close()
		refused(t, cfg, db.ErrDamaged, "restore")
	})
	t.Run("newer schema", func(t *testing.T) {
		cfg := made(t)
		sqlite(t, cfg.DB, "INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, 1)")
		refused(t, cfg, db.ErrNewerSchema, "9999")
	})
	t.Run("read-only file system", func(t *testing.T) {
		dir := t.TempDir()
		if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", dir).Run(); err != nil {
			t.Skipf("cannot mount a tmpfs here (%v): the read-only file system is not tried", err)
		}
		t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
		cfg := testConfig(t)
		cfg.DB = filepath.Join(dir, "t.db")
		d, err := db.Open(context.Background(), cfg.DB)
		if err != nil {
			t.Fatal(err)
		}
		d.Close()
		if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
			t.Skipf("cannot remount read-only (%v: %s)", err, out)
		}
		refused(t, cfg, db.ErrUnwritable, "writable")
	})
	t.Run("read-only file", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root writes a file whatever its mode; the read-only file system case covers root")
		}
		cfg := made(t)
		if err := os.Chmod(cfg.DB, 0o400); err != nil {
			t.Fatal(err)
		}
		refused(t, cfg, db.ErrUnwritable, "writable")
	})
	t.Run("older schema is migrated", func(t *testing.T) {
		cfg := testConfig(t)
		pool, err := sql.Open("sqlite", cfg.DB)
		if err != nil {
			t.Fatal(err)
		}
		p, err := goose.NewProvider(goose.DialectSQLite3, pool, migrations.FS, goose.WithDisableGlobalRegistry(true))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.UpTo(context.Background(), 5); err != nil {
			t.Fatal(err)
		}
		pool.Close()
		tv, err := New(context.Background(), cfg)
		if err != nil {
			t.Fatalf("New on an older schema = %v", err)
		}
		tv.Close()
	})
}
