package setup

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/orderlab/orderlab/lab/dbproxy"
	"github.com/orderlab/orderlab/lab/scenario"
)

// LabProxy is the running lab's database fault proxy (compose profile
// dbproxy): Control drives it; Host is the name (host, or host:port) the
// services' DATABASE_URL must reach Postgres by, so that their queries go
// through it.
type LabProxy struct {
	Control *dbproxy.Client
	Host    string
	// Database reaches the lab's database straight, not through the proxy
	// (from the host 127.0.0.1:5433, in compose postgres:5432): a db_stop's
	// keyed orders are held to its orders table.
	Database string
}

// checkProxy makes sure the lab's proxy answers, that every target's
// database URL goes through it (as GET /knobs shows DATABASE_URL, when it
// shows it), and for a db_stop that the lab's database can be read.
func (l *labSetup) checkProxy(ctx context.Context) error {
	s := l.s
	what := "sets db_latency"
	if slices.ContainsFunc(s.Phases, scenario.Stops) {
		what = "sets db_stop"
	}
	if l.proxy == nil {
		return fmt.Errorf("%s %s: it needs the lab's database proxy (docs/lab-scenarios.md)", s.Name, what)
	}
	if err := l.proxy.Control.Set(ctx, dbproxy.Fault{Fault: "none"}); err != nil {
		return fmt.Errorf("%s %s and the lab's database proxy does not answer "+
			"(docker compose --profile dbproxy up, with LAB_DATABASE_URL through it: docs/lab-scenarios.md): %w", s.Name, what, err)
	}
	for _, t := range s.Targets {
		c := l.knobs.clients[t]
		if c == nil {
			continue
		}
		have, err := c.Get(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		u, ok := have["DATABASE_URL"]
		if !ok {
			fmt.Fprintf(l.log, "   %s: GET /knobs shows no DATABASE_URL: cannot check that it goes through the proxy\n", t)
			continue
		}
		if !reaches(u, l.proxy.Host) {
			return fmt.Errorf("%s reaches Postgres at %s, not through the database proxy %s: "+
				"start the lab with LAB_DATABASE_URL through it (docs/lab-scenarios.md)", t, u, l.proxy.Host)
		}
	}
	if what == "sets db_stop" {
		if err := ping(ctx, l.proxy.Database); err != nil {
			return fmt.Errorf("%s sets db_stop, whose keyed orders are held to the lab's orders table, and the lab's database "+
				"does not answer (-lab-db URL): %w", s.Name, err)
		}
	}
	return nil
}

// ping connects to dsn once.
func ping(ctx context.Context, dsn string) error {
	if dsn == "" {
		return errors.New("no database URL")
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}

// setProxyLatency gives the lab's proxy phase p's latency (none when p
// sets none).
func (l *labSetup) setProxyLatency(ctx context.Context, p scenario.Phase) error {
	f := dbproxy.Fault{Fault: "none"}
	if p.DBLatency != nil && *p.DBLatency > 0 {
		f = dbproxy.Fault{Fault: "latency", Latency: p.DBLatency.D().String()}
		fmt.Fprintf(l.log, "   %s more per round trip to Postgres (the lab's dbproxy)\n", p.DBLatency.D())
	}
	return l.proxy.Control.Set(ctx, f)
}

// reaches reports whether the database address dsn (a URL, or the key=value
// form the services show, password masked) names host (host:port: that
// port too).
func reaches(dsn, host string) bool {
	h, port, err := net.SplitHostPort(host)
	if err != nil {
		h, port = host, ""
	}
	fields := strings.Fields(dsn)
	if slices.Contains(fields, "host="+h) {
		return port == "" || slices.Contains(fields, "port="+port)
	}
	if port != "" {
		return strings.Contains(dsn, "@"+host+"/") || strings.Contains(dsn, "//"+host+"/")
	}
	return strings.Contains(dsn, "@"+host+":") || strings.Contains(dsn, "@"+host+"/") || strings.Contains(dsn, "//"+host+":")
}
