package setup

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/orderlab/orderlab/internal/faultproxy"
	"github.com/orderlab/orderlab/internal/pgcluster"
	"github.com/orderlab/orderlab/internal/pgdb"
	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/observe"
	"github.com/orderlab/orderlab/loadtest/measure"
)

// appRole is the login role of the services when the scenario sets
// cluster.role.
const appRole = "orderlab_app"

// backend is the database side of a local run: the scenario's database on
// the shared server or on a cluster of the runner's own, and what stands
// between it and the services (a role with a connection limit, PgBouncer,
// a fault proxy).
type backend struct {
	db      *pgdb.Database
	cluster *pgcluster.Cluster // cluster.owned
	bouncer *pgcluster.Bouncer // cluster.pgbouncer
	proxy   *faultproxy.Proxy  // some phase sets db_latency
	direct  string             // the services' URL straight to Postgres (or through the proxy)
	pooled  string             // through PgBouncer
	log     io.Writer
}

// newBackend creates the scenario's database: on a cluster of its own when
// s says so, else on adminURL's server once it has room for a pool.
func newBackend(ctx context.Context, adminURL string, s scenario.Scenario, log io.Writer) (be *backend, err error) {
	be = &backend{log: log}
	defer func() {
		if err != nil {
			err = errors.Join(err, be.close(context.WithoutCancel(ctx)))
			be = nil
		}
	}()
	c := s.Cluster
	if c != nil && c.Owned {
		fmt.Fprintln(log, "   starting a throwaway Postgres cluster (internal/pgcluster)")
		if be.cluster, err = pgcluster.New(ctx); err != nil {
			return be, err
		}
		adminURL = be.cluster.URL
	} else if err := checkConnections(ctx, adminURL, s, log); err != nil {
		return be, err
	}
	if be.db, err = pgdb.Create(ctx, adminURL, dbNameOf(s.Name)); err != nil {
		return be, err
	}
	be.direct = be.db.URL
	var users []string
	if c != nil && c.Role != nil {
		if be.direct, err = be.createRole(ctx, c.Role.ConnectionLimit); err != nil {
			return be, err
		}
		users = append(users, appRole)
	}
	if c != nil && c.PgBouncer != nil {
		fmt.Fprintf(log, "   starting PgBouncer, pool_mode=%s, default_pool_size=%d\n", c.PgBouncer.Mode, c.PgBouncer.Pool)
		if be.bouncer, err = be.cluster.PgBouncer(ctx, c.PgBouncer.Mode, c.PgBouncer.Pool, users...); err != nil {
			return be, err
		}
		if be.pooled, err = be.bouncer.URL(be.direct); err != nil {
			return be, err
		}
	}
	for _, p := range s.Phases {
		if p.DBLatency == nil {
			continue
		}
		u, err := url.Parse(be.direct)
		if err != nil {
			return be, err
		}
		if be.proxy, err = faultproxy.New(u.Host); err != nil {
			return be, err
		}
		u.Host = be.proxy.Addr
		be.direct = u.String()
		break
	}
	return be, nil
}

// createRole makes the services' login role with a connection limit, owner
// of the database, and returns the database's URL under that role.
func (be *backend) createRole(ctx context.Context, limit int) (string, error) {
	conn, err := pgx.Connect(ctx, be.db.URL)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, q := range []string{
		fmt.Sprintf("CREATE ROLE %s LOGIN CONNECTION LIMIT %d", appRole, limit),
		fmt.Sprintf("ALTER DATABASE %s OWNER TO %s", pgx.Identifier{be.db.Name}.Sanitize(), appRole),
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return "", fmt.Errorf("%s: %w", q, err)
		}
	}
	u, err := url.Parse(be.db.URL)
	if err != nil {
		return "", err
	}
	u.User = url.User(appRole)
	fmt.Fprintf(be.log, "   the services log in as %s (CONNECTION LIMIT %d)\n", appRole, limit)
	return u.String(), nil
}

// urlFor is the DATABASE_URL of phase p's services.
func (be *backend) urlFor(p scenario.Phase) string {
	if p.PgBouncer {
		return be.pooled
	}
	return be.direct
}

// setLatency gives the proxy phase p's latency (none when p sets none).
func (be *backend) setLatency(p scenario.Phase) error {
	if be.proxy == nil {
		return nil
	}
	be.proxy.Clear()
	if p.DBLatency == nil || *p.DBLatency <= 0 {
		return nil
	}
	d := p.DBLatency.D()
	fmt.Fprintf(be.log, "   %s more per round trip to Postgres (faultproxy, %s each way)\n", d, d/2)
	return be.proxy.Latency(d / 2)
}

// close drops the database and stops what newBackend started.
func (be *backend) close(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var errs []error
	if be.proxy != nil {
		be.proxy.Close()
	}
	if be.bouncer != nil {
		errs = append(errs, be.bouncer.Stop())
	}
	if be.cluster != nil {
		return errors.Join(append(errs, be.cluster.Destroy(ctx))...)
	}
	if be.db != nil {
		errs = append(errs, be.db.Drop(ctx))
	}
	return errors.Join(errs...)
}

// checkConnections waits (at most a minute) until Postgres can give one
// service its pool, and fails when it cannot: starved of connections a
// service answers 500s, and the figures would measure the shared database,
// not the model. Phases that never touch the pool need one connection
// (readiness) and a spare.
func checkConnections(ctx context.Context, adminURL string, s scenario.Scenario, log io.Writer) error {
	need := 0
	for _, p := range s.Phases {
		if p.Tasks != nil {
			continue
		}
		pool := 0
		if u, err := url.Parse(p.Request.Path); err == nil && (u.Path == "/orders" || u.Path == "/work/db") {
			env := scenario.Merged(s.Env, p.Env)
			if pool, err = strconv.Atoi(cmp.Or(env["DB_MAX_CONNS"], "20")); err != nil {
				return fmt.Errorf("DB_MAX_CONNS %q: %w", env["DB_MAX_CONNS"], err)
			}
		}
		need = max(need, pool+2)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		free, err := pgdb.FreeConnections(ctx, adminURL)
		if err != nil {
			return err
		}
		if free >= need {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres has %d free connections and a service of %s needs %d: "+
				"stop other users of the server (make run, tests) or raise max_connections", free, s.Name, need)
		}
		fmt.Fprintf(log, "   waiting for Postgres connections: %d free, %d needed\n", free, need)
		if !measure.Sleep(ctx, 5*time.Second) {
			return ctx.Err()
		}
	}
}

var notWord = regexp.MustCompile(`[^a-z0-9]+`)

// dbNameOf is the scenario's database: orderlab_scn_<name>.
func dbNameOf(name string) string {
	return "orderlab_scn_" + strings.Trim(notWord.ReplaceAllString(strings.ToLower(name), "_"), "_")
}

// watchTarget starts a PostgresWatch on be's database for one target's run of a
// local run, with a PoolerWatch beside it when the run goes through
// PgBouncer (pooled); nil when the runner did not start the services.
func (be *backend) watchTarget(ctx context.Context, adminURL, target string, pooled bool) *observe.PostgresWatch {
	if be == nil || be.db == nil {
		return nil
	}
	logPath := ""
	if be.cluster != nil {
		adminURL, logPath = be.cluster.URL, be.cluster.Log()
	}
	role := "postgres"
	if u, err := url.Parse(be.direct); err == nil && u.User != nil {
		role = u.User.Username()
	}
	w := observe.WatchPostgres(ctx, adminURL, be.db.Name, role, logPath, target, observe.Every)
	if pooled && be.bouncer != nil {
		w.Pooler = observe.WatchPooler(ctx, be.bouncer.AdminURL(), be.db.Name, target, observe.Every)
	}
	return w
}
