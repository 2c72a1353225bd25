// Command cluster runs Tavern on several nodes on this machine, for trying
// the cluster path (DESIGN.md "Beyond one machine"): a throwaway
// PostgreSQL cluster in ./data/pg (Debian's postgresql package; as root
// it runs as the postgres user), a database "tavern" in the C locale, and
// three tavern servers (bin/tavern, make build) on loopback ports 8081,
// 8082 and 8083, each a node. It prints their URLs and runs until
// interrupted, then stops the nodes (SIGTERM: they drain) and PostgreSQL.
// make cluster builds and runs it. README.md "Running several nodes" says
// how to do the same on real machines.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"tavern/internal/pgtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	dir := flag.String("dir", "data/pg", "PostgreSQL's directory (created if missing)")
	nodes := flag.Int("nodes", 3, "tavern nodes to start")
	port := flag.Int("port", 8081, "port of the first node; the others follow")
	bin := flag.String("bin", "bin/tavern", "the tavern binary (make build)")
	token := flag.String("admin-token", "cluster", "TAVERN_ADMIN_TOKEN of every node")
	flag.Parse()

	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return err
	}
	pg, err := pgtest.Start(ctx, abs)
	if err != nil {
		return err
	}
	defer pg.Stop()
	url := pg.URL("tavern")
	if err := createDatabase(ctx, pg); err != nil {
		return err
	}
	fmt.Printf("PostgreSQL: %s\n", url)

	logs := filepath.Join(filepath.Dir(abs), "cluster")
	if err := os.MkdirAll(logs, 0o750); err != nil {
		return err
	}
	var procs []*exec.Cmd
	defer func() {
		for _, p := range procs {
			p.Process.Signal(syscall.SIGTERM)
		}
		for _, p := range procs {
			p.Wait()
		}
	}()
	for i := range *nodes {
		addr := fmt.Sprintf("127.0.0.1:%d", *port+i)
		logf, err := os.Create(filepath.Join(logs, fmt.Sprintf("node%d.log", i+1)))
		if err != nil {
			return err
		}
		defer logf.Close()
		cmd := exec.Command(*bin, "-addr", addr)
		cmd.Env = append(os.Environ(), "TAVERN_DB="+url, "TAVERN_CLUSTER_TOKEN=cluster-dev-token", "TAVERN_ADMIN_TOKEN="+*token)
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start %s: %w", *bin, err)
		}
		procs = append(procs, cmd)
		fmt.Printf("node %d: http://%s/  (admin: http://%s/admin?token=%s, log %s, pid %d)\n", i+1, addr, addr, *token, logf.Name(), cmd.Process.Pid)
	}
	fmt.Println("Every node serves every table. Ctrl-C stops the nodes and PostgreSQL.")
	exited := make(chan error, len(procs))
	for _, p := range procs {
		go func() { exited <- p.Wait() }()
	}
	select {
	case <-ctx.Done():
	case err := <-exited:
		fmt.Println("a node exited:", err)
	}
	return nil
}

// createDatabase creates the database tavern in the C locale unless it
// exists.
func createDatabase(ctx context.Context, pg *pgtest.Cluster) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, pg.URL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'tavern')").Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	_, err = pg.CreateDatabase(ctx, "tavern")
	if err != nil && !strings.Contains(err.Error(), "already exists") {
		return err
	}
	return nil
}
