package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/orderlab/orderlab/internal/proc"
)

// PgBouncerBin is where Debian's pgbouncer package installs the pooler
// (make pgbouncer installs it).
const PgBouncerBin = "/usr/sbin/pgbouncer"

// Bouncer is a PgBouncer in front of a cluster, on 127.0.0.1:Port.
type Bouncer struct {
	Port int
	p    *proc.Process
}

// PgBouncer starts a PgBouncer in front of c in pool mode (transaction or
// session) with pool server connections per database and user, trusting
// users (each must be named in users; postgres always is). Every database
// of the cluster is reachable through it under its own name. Like the
// server, PgBouncer refuses to run as root: as root it runs as the postgres
// user (-u postgres).
//
// Its server_reset_query stays the default, DISCARD ALL, which PgBouncer
// runs only in session mode: in transaction mode a server connection passes
// from client to client with whatever session state one left on it (SET,
// session advisory locks, LISTEN, temporary tables), so a client must
// leave none (docs/scenarios: too-many-clients).
//
// postgres may read its admin console (stats_users; AdminURL): SHOW POOLS
// and the like, not PAUSE or SET.
//
// It closes a server connection idle for a second (server_idle_timeout; its
// default is ten minutes): one PgBouncer serves every phase and repetition
// of a scenario, and the connections it would keep after its load ended
// count against the role's CONNECTION LIMIT when the next phase connects
// around it.
func (c *Cluster) PgBouncer(ctx context.Context, mode string, pool int, users ...string) (*Bouncer, error) {
	bin := PgBouncerBin
	if _, err := os.Stat(bin); err != nil {
		if bin, err = exec.LookPath("pgbouncer"); err != nil {
			return nil, errors.New("no pgbouncer: install it (make pgbouncer; Debian: apt-get install pgbouncer)")
		}
	}
	addrs, err := proc.LoopbackAddrs(1)
	if err != nil {
		return nil, err
	}
	_, p, _ := net.SplitHostPort(addrs[0])
	dir := filepath.Join(c.Dir, "pgbouncer")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var list strings.Builder
	for _, u := range append([]string{"postgres"}, users...) {
		fmt.Fprintf(&list, "%q \"\"\n", u)
	}
	ini := fmt.Sprintf(`[databases]
* = host=127.0.0.1 port=%d

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %s
unix_socket_dir =
auth_type = trust
auth_file = %[3]s/userlist.txt
stats_users = postgres
pool_mode = %s
default_pool_size = %d
server_idle_timeout = 1
max_client_conn = 2000
ignore_startup_parameters = extra_float_digits
logfile = %[3]s/pgbouncer.log
pidfile = %[3]s/pgbouncer.pid
`, c.Port, p, dir, mode, pool)
	if err := os.WriteFile(filepath.Join(dir, "userlist.txt"), []byte(list.String()), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "pgbouncer.ini"), []byte(ini), 0o644); err != nil {
		return nil, err
	}
	var args []string
	if c.asUser != nil {
		if err := chownToPostgres(dir); err != nil {
			return nil, err
		}
		args = append(args, "-u", "postgres")
	}
	args = append(args, filepath.Join(dir, "pgbouncer.ini"))
	pr, err := proc.Start("pgbouncer", bin, args, proc.BaseEnv(), filepath.Join(dir, "stdout.log"))
	if err != nil {
		return nil, err
	}
	b := &Bouncer{p: pr}
	fmt.Sscan(p, &b.Port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", addrs[0])
		if err == nil {
			conn.Close()
			return b, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			_ = b.Stop()
			log, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
			return nil, fmt.Errorf("pgbouncer did not listen on %s: %w\n%s", addrs[0], err, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// URL is u (a URL of the cluster) with its host and port replaced by the
// bouncer's, and default_query_exec_mode=exec: pgx's default caches named
// prepared statements per connection, which a transaction-mode pooler
// before 1.21 does not track (the next transaction may run on a server
// connection that never saw the statement). exec sends each query with
// the unnamed statement, still with parameters bound separately.
func (b *Bouncer) URL(u string) (string, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return "", err
	}
	pu.Host = fmt.Sprintf("127.0.0.1:%d", b.Port)
	q := pu.Query()
	q.Set("default_query_exec_mode", "exec")
	pu.RawQuery = q.Encode()
	return pu.String(), nil
}

// AdminURL is PgBouncer's admin console, the pseudo-database pgbouncer, as
// postgres. The console speaks only the simple query protocol, which the URL
// asks pgx for.
func (b *Bouncer) AdminURL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/pgbouncer?sslmode=disable&default_query_exec_mode=simple_protocol", b.Port)
}

// Stop ends PgBouncer (SIGTERM: it closes every connection at once). Its
// exit status is not an error: asked to stop, it exits with 1.
func (b *Bouncer) Stop() error {
	err := b.p.Stop(5 * time.Second)
	if _, exited := errors.AsType[*exec.ExitError](err); exited {
		return nil
	}
	return err
}
