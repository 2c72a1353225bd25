// Package pgtest runs a throwaway PostgreSQL cluster for the tests of the
// packages that store on PostgreSQL. A package's TestMain calls [Main],
// which initialises a cluster in a temporary directory (C locale, unix
// socket only, no fsync), runs the tests and stops it; each test then
// takes an empty database of its own with [URL].
//
// The cluster runs Debian's PostgreSQL binaries (the postgresql package:
// /usr/lib/postgresql/N/bin) or those on PATH. PostgreSQL refuses to run
// as root, so as root the cluster runs as the postgres user (runuser).
// Without binaries the tests skip, except under CI=true, where Main fails:
// a CI machine must run them (.ci/run installs the package).
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

var (
	mu sync.Mutex
	// cluster is the running cluster, nil if none.
	cluster *Cluster
	// errNone says why there is no cluster (Main not called, no binaries).
	errNone = errors.New("pgtest: TestMain does not call pgtest.Main")
	dbSeq   atomic.Int64
)

// Main starts a cluster, runs m and stops the cluster; it returns the
// exit code for os.Exit. Without PostgreSQL the tests that call URL skip
// (they fail under CI=true).
func Main(m *testing.M) int {
	c, err := Start(context.Background(), "")
	if err != nil {
		if os.Getenv("CI") == "true" {
			fmt.Fprintf(os.Stderr, "pgtest: PostgreSQL is required in CI: %v\n", err)
			return 1
		}
		mu.Lock()
		errNone = err
		mu.Unlock()
		return m.Run()
	}
	mu.Lock()
	cluster = c
	mu.Unlock()
	code := m.Run()
	if err := c.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
	}
	return code
}

// URL returns the URL of a new, empty database on the package's cluster,
// for tb alone (dropped with the cluster). tb skips, or fails under
// CI=true, when there is no cluster.
func URL(tb testing.TB) string {
	tb.Helper()
	mu.Lock()
	c, err := cluster, errNone
	mu.Unlock()
	if c == nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("PostgreSQL tests cannot run: %v", err)
		}
		tb.Skipf("PostgreSQL tests skipped: %v", err)
	}
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	u, err := c.CreateDatabase(context.Background(), name)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

// Cluster is a running PostgreSQL cluster listening on a unix socket in
// its directory.
type Cluster struct {
	Dir     string // data in Dir/data, the socket in Dir
	bin     string
	asUser  string // run the binaries as this user ("" = as we are)
	owned   bool   // Dir was made by Start and is removed by Stop
	stopped bool
}

// Binaries returns the directory of the PostgreSQL server binaries
// (initdb, pg_ctl), or an error saying none were found.
func Binaries() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("no PostgreSQL server binaries (install Debian's postgresql package)")
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Start initialises and starts a cluster in dir ("" = a new temporary
// directory, removed by Stop). As root the cluster runs as the postgres
// user, who must be able to write dir.
func Start(ctx context.Context, dir string) (*Cluster, error) {
	bin, err := Binaries()
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin}
	if os.Geteuid() == 0 {
		c.asUser = "postgres"
	}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "pgtest"); err != nil {
			return nil, err
		}
		c.owned = true
	}
	c.Dir = dir
	if c.asUser != "" {
		if err := chown(dir, c.asUser); err != nil {
			c.cleanup()
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); err != nil {
		if out, err := c.run(ctx, "initdb", "-D", data, "-U", "postgres", "--auth=trust", "--locale=C", "-E", "UTF8", "--no-sync"); err != nil {
			c.cleanup()
			return nil, fmt.Errorf("initdb: %v: %s", err, out)
		}
	}
	// Tests want speed, not durability; the socket only, no TCP port.
	opts := fmt.Sprintf("-k %s -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200", dir)
	if out, err := c.run(ctx, "pg_ctl", "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		c.cleanup()
		return nil, fmt.Errorf("pg_ctl start: %v: %s\n%s", err, out, log)
	}
	return c, nil
}

// URL returns the URL of database name on the cluster.
func (c *Cluster) URL(name string) string {
	return fmt.Sprintf("postgres://postgres@/%s?host=%s&sslmode=disable", name, c.Dir)
}

// CreateDatabase creates an empty database and returns its URL.
func (c *Cluster) CreateDatabase(ctx context.Context, name string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return "", fmt.Errorf("pgtest: connect: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C' ENCODING 'UTF8'"); err != nil {
		return "", fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	return c.URL(name), nil
}

// Restart stops the cluster and starts it again (the fault tests'
// PostgreSQL restart).
func (c *Cluster) Restart(ctx context.Context) error {
	data := filepath.Join(c.Dir, "data")
	if out, err := c.run(ctx, "pg_ctl", "-D", data, "-m", "fast", "-w", "restart"); err != nil {
		return fmt.Errorf("pg_ctl restart: %v: %s", err, out)
	}
	return nil
}

// Stop stops the cluster and removes its directory if Start made it.
// Safe to call twice.
func (c *Cluster) Stop() error {
	if c.stopped {
		return nil
	}
	c.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := c.run(ctx, "pg_ctl", "-D", filepath.Join(c.Dir, "data"), "-m", "immediate", "-w", "stop")
	c.cleanup()
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s", err, out)
	}
	return nil
}

func (c *Cluster) cleanup() {
	if c.owned {
		os.RemoveAll(c.Dir)
	}
}

// run runs one of the cluster's binaries, as asUser if set.
func (c *Cluster) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	path := filepath.Join(c.bin, name)
	var cmd *exec.Cmd
	if c.asUser != "" {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", c.asUser, "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	// pg_ctl start leaves the server running: its output must not be a
	// pipe the server keeps open, or CombinedOutput waits for it.
	f, err := os.CreateTemp("", "pgtest-out")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Dir = os.TempDir()
	err = cmd.Run()
	out, _ := os.ReadFile(f.Name())
	return out, err
}

func chown(dir, name string) error {
	u, err := user.Lookup(name)
	if err != nil {
		return fmt.Errorf("pgtest: PostgreSQL refuses to run as root and there is no %s user: %w", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	return reachable(dir, name)
}

// reachable makes sure user name can reach dir: every folder above it
// must let others pass (o+x), as root's ./data (0750) does not. A folder
// inside the working directory (the project's own, such as ./data) is
// opened to passing through, not to reading; one elsewhere is left as it
// is and named in the error.
func reachable(dir, name string) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	for d := filepath.Dir(dir); d != filepath.Dir(d); d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 != 0 {
			continue
		}
		if rel, err := filepath.Rel(wd, d); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return fmt.Errorf("pgtest: the %s user cannot reach %s: %s lets no other user pass (chmod o+x it, or choose a directory elsewhere)", name, dir, d)
		}
		if err := os.Chmod(d, fi.Mode().Perm()|0o001); err != nil {
			return err
		}
	}
	return nil
}

// Restart restarts the package's cluster (a fault test's PostgreSQL
// restart); tb fails if there is none.
func Restart(tb testing.TB) {
	tb.Helper()
	mu.Lock()
	c := cluster
	mu.Unlock()
	if c == nil {
		tb.Fatal("pgtest: no cluster to restart")
	}
	if err := c.Restart(context.Background()); err != nil {
		tb.Fatal(err)
	}
}
