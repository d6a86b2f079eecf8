// Package pgcluster runs a throwaway PostgreSQL cluster: initdb into a
// temporary directory, then pg_ctl start, stop and restart on a free
// loopback port, with the PostgreSQL binaries installed on the machine.
// It exists so that a test or a scenario can stop and restart a Postgres
// under load without touching the machine's shared server.
//
// PostgreSQL refuses to run as root. As root, every command runs as the
// postgres user (runuser -u postgres --) in a directory that user owns.
//
// A cluster is a child process of nobody: pg_ctl starts the postmaster
// detached. Destroy it when done; a process that dies first leaves it
// running, with its data in the temporary directory (Dir).
package pgcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/orderlab/orderlab/internal/proc"
)

// Cluster is an initialised PostgreSQL cluster on 127.0.0.1:Port.
type Cluster struct {
	Dir  string // holds data/ (the cluster), the server log and its Unix socket
	Port int
	// URL is the superuser's URL (user postgres, trust auth, database
	// postgres), as pgdb.Create expects of an admin URL.
	URL string

	bin      string   // directory of initdb, pg_ctl, postgres
	asUser   []string // "runuser -u postgres --" as root, else nothing
	settings []string // the server's settings beyond the defaults, "name=value"
}

// New initialises a cluster in a new temporary directory and starts it on
// a free loopback port. It fails when no PostgreSQL binaries are found
// (BinDir). Settings are for tests: trust authentication, fsync off (the
// data need not survive a machine crash, only a server restart),
// max_connections 100; settings ("max_connections=200", no blanks) are
// given to the server after these, on every start.
func New(ctx context.Context, settings ...string) (*Cluster, error) {
	for _, s := range settings {
		if name, _, ok := strings.Cut(s, "="); !ok || name == "" || strings.ContainsAny(s, " \t\n'\"") {
			return nil, fmt.Errorf("server setting %q: want name=value without blanks or quotes", s)
		}
	}
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	addrs, err := proc.LoopbackAddrs(1)
	if err != nil {
		return nil, err
	}
	_, p, _ := net.SplitHostPort(addrs[0])
	port, _ := strconv.Atoi(p)
	dir, err := os.MkdirTemp("", "orderlab-pgcluster-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{
		Dir: dir, Port: port, bin: bin, settings: settings,
		URL: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port),
	}
	if os.Geteuid() == 0 {
		if err := chownToPostgres(dir); err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
		c.asUser = []string{"runuser", "-u", "postgres", "--"}
	}
	if err := c.run(ctx, "initdb", "-D", c.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8",
		"--locale=C", "--no-sync", "--no-instructions"); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

func (c *Cluster) data() string { return filepath.Join(c.Dir, "data") }

// Log is the server's log file.
func (c *Cluster) Log() string { return filepath.Join(c.Dir, "postgres.log") }

// Start starts the server and waits until it accepts connections.
func (c *Cluster) Start(ctx context.Context) error {
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100", c.Port, c.Dir)
	for _, s := range c.settings {
		opts += " -c " + s
	}
	return c.run(ctx, "pg_ctl", "-D", c.data(), "-l", c.Log(), "-o", opts, "-w", "-t", "60", "start")
}

// Stop stops the server in fast mode, as an operator's restart does: open
// sessions are ended (each gets FATAL 57P01), open transactions rolled back,
// committed ones kept. It returns once the server is down.
func (c *Cluster) Stop(ctx context.Context) error {
	return c.run(ctx, "pg_ctl", "-D", c.data(), "-m", "fast", "-w", "-t", "60", "stop")
}

// Restart stops the server in fast mode and starts it again.
func (c *Cluster) Restart(ctx context.Context) error {
	if err := c.Stop(ctx); err != nil {
		return err
	}
	return c.Start(ctx)
}

// Destroy stops the server (immediately, if it runs) and deletes Dir.
func (c *Cluster) Destroy(ctx context.Context) error {
	var err error
	if _, serr := os.Stat(filepath.Join(c.data(), "postmaster.pid")); serr == nil {
		err = c.run(ctx, "pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "-t", "60", "stop")
	}
	return errors.Join(err, os.RemoveAll(c.Dir))
}

// run runs a PostgreSQL binary (as the postgres user when root) and returns
// its output with the error.
func (c *Cluster) run(ctx context.Context, name string, args ...string) error {
	argv := append(append(append([]string{}, c.asUser...), filepath.Join(c.bin, name)), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = c.Dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// pg_ctl's children (the postmaster) inherit the output pipes: without
	// a WaitDelay, Wait would block until the server exits.
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		return fmt.Errorf("%s: %w\n%s", strings.Join(argv, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

// BinDir finds the PostgreSQL server binaries: $PG_BINDIR, else
// `pg_config --bindir` when it holds initdb, else the newest
// /usr/lib/postgresql/*/bin (Debian, Ubuntu) or
// /usr/local/opt/postgresql*/bin and /opt/homebrew/opt/postgresql*/bin
// (Homebrew).
func BinDir() (string, error) {
	has := func(dir string) bool {
		_, err := os.Stat(filepath.Join(dir, "initdb"))
		if err != nil {
			_, err = os.Stat(filepath.Join(dir, "initdb.exe"))
		}
		return err == nil
	}
	if d := os.Getenv("PG_BINDIR"); d != "" {
		if has(d) {
			return d, nil
		}
		return "", fmt.Errorf("PG_BINDIR=%s holds no initdb", d)
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		if d := strings.TrimSpace(string(out)); has(d) {
			return d, nil
		}
	}
	var found []string
	for _, pattern := range []string{"/usr/lib/postgresql/*/bin", "/usr/local/opt/postgresql*/bin", "/opt/homebrew/opt/postgresql*/bin"} {
		ms, _ := filepath.Glob(pattern)
		for _, m := range ms {
			if has(m) {
				found = append(found, m)
			}
		}
	}
	if len(found) == 0 {
		return "", errors.New("no PostgreSQL server binaries (initdb, pg_ctl) found: install the PostgreSQL server " +
			"(Debian: apt-get install postgresql) or set PG_BINDIR to the directory that holds them")
	}
	sort.Slice(found, func(i, j int) bool { return versionOf(found[i]) > versionOf(found[j]) })
	return found[0], nil
}

// versionOf reads the major version in a path like /usr/lib/postgresql/15/bin.
func versionOf(dir string) int {
	for _, part := range strings.Split(filepath.ToSlash(dir), "/") {
		part = strings.TrimPrefix(part, "postgresql@")
		part = strings.TrimPrefix(part, "postgresql")
		if v, err := strconv.Atoi(part); err == nil {
			return v
		}
	}
	return 0
}

// chownToPostgres gives dir to the postgres user, which runs the server.
func chownToPostgres(dir string) error {
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("running as root, the cluster must run as the postgres user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return fmt.Errorf("give %s to postgres: %w", dir, err)
	}
	return nil
}
