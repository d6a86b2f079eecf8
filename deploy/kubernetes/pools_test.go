package kubernetes_test

import (
	"bufio"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The pool arithmetic of docs/kubernetes.md: every pod a service runs,
// rolling updates included, opens up to DB_MAX_CONNS pooled connections
// plus one of its own (migrations at start, then readiness checks). They
// must fit what they connect to: Postgres' max_connections less its
// superuser_reserved_connections, or PgBouncer's max_client_conn, whose
// server pool must fit Postgres in turn.
func TestPoolsFitTheDatabase(t *testing.T) {
	for _, name := range []string{"lab", "operator", "pooled"} {
		t.Run(name, func(t *testing.T) {
			r := overlay(t, name)
			pg := postgresBudget(t, r)
			var bouncer *pgbouncer
			clients := map[string]int{} // by the host they connect to
			for _, d := range objectsOf[appsv1.Deployment](r) {
				if d.Spec.Template.Labels["app.kubernetes.io/component"] != "api" {
					continue
				}
				c := d.Spec.Template.Spec.Containers[0]
				vars := env(t, r, c)
				maxConns := 20 // the services' default
				if v := vars["DB_MAX_CONNS"]; v != "" {
					var err error
					if maxConns, err = strconv.Atoi(v); err != nil {
						t.Fatalf("%s: DB_MAX_CONNS %q", d.Name, v)
					}
				}
				u, err := url.Parse(vars["DATABASE_URL"])
				if err != nil || u.Hostname() == "" {
					t.Fatalf("%s: DATABASE_URL %q: %v", d.Name, vars["DATABASE_URL"], err)
				}
				pods := maxPods(t, d)
				clients[u.Hostname()] += pods * (maxConns + 1)
				t.Logf("%s: %d pods at most x (DB_MAX_CONNS %d + 1) = %d connections to %s", d.Name, pods, maxConns, pods*(maxConns+1), u.Host)
				if u.Hostname() == "pgbouncer" {
					// pgx over transaction pooling: no prepared statement may
					// outlive its transaction.
					if m := u.Query().Get("default_query_exec_mode"); m != "exec" && m != "simple_protocol" {
						t.Errorf("%s: default_query_exec_mode=%q behind PgBouncer, want exec or simple_protocol", d.Name, m)
					}
					bouncer = readPgbouncer(t, r)
				}
			}
			for host, n := range clients {
				switch host {
				case "postgres":
					pg.use(t, "the services", n)
				case "pgbouncer":
					if n > bouncer.maxClients {
						t.Errorf("the services open up to %d connections to PgBouncer, max_client_conn is %d", n, bouncer.maxClients)
					}
					t.Logf("PgBouncer: %d client connections of max_client_conn %d", n, bouncer.maxClients)
					pg.use(t, "PgBouncer's server pool", bouncer.serverConns)
				default:
					t.Errorf("services connect to %q, neither Postgres nor PgBouncer", host)
				}
			}
			if len(clients) == 0 {
				t.Error("no service found")
			}
		})
	}
}

// maxPods is how many pods a Deployment may run at once: its replicas, plus
// the surge of a rolling update.
func maxPods(t *testing.T, d *appsv1.Deployment) int {
	t.Helper()
	n := int(replicas(d.Spec.Replicas))
	if d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		return n
	}
	surge := intstr.FromString("25%") // Kubernetes' default
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil && ru.MaxSurge != nil {
		surge = *ru.MaxSurge
	}
	extra, err := intstr.GetScaledValueFromIntOrPercent(&surge, n, true)
	if err != nil {
		t.Fatalf("%s: maxSurge: %v", d.Name, err)
	}
	return n + extra
}

// budget is what Postgres lets ordinary users open.
type budget struct {
	limit, used int
}

var pgSetting = regexp.MustCompile(`^(max_connections|superuser_reserved_connections|reserved_connections)=(\d+)$`)

// postgresBudget reads max_connections and the reserved connections from
// the Postgres StatefulSet's arguments (-c name=value), with Postgres'
// defaults (100, 3, 0) for those not given.
func postgresBudget(t *testing.T, r *rendered) *budget {
	t.Helper()
	ss := named(t, r, "postgres", func(s *appsv1.StatefulSet) string { return s.Name })
	if n := replicas(ss.Spec.Replicas); n != 1 {
		t.Fatalf("postgres: %d replicas, want 1", n)
	}
	settings := map[string]int{"max_connections": 100, "superuser_reserved_connections": 3, "reserved_connections": 0}
	args := ss.Spec.Template.Spec.Containers[0].Args
	for i, a := range args {
		if a == "-c" && i+1 < len(args) {
			if m := pgSetting.FindStringSubmatch(args[i+1]); m != nil {
				settings[m[1]], _ = strconv.Atoi(m[2])
			}
		}
	}
	b := &budget{limit: settings["max_connections"] - settings["superuser_reserved_connections"] - settings["reserved_connections"]}
	t.Logf("Postgres: max_connections %d, of which %d for ordinary users", settings["max_connections"], b.limit)
	return b
}

func (b *budget) use(t *testing.T, who string, n int) {
	t.Helper()
	b.used += n
	t.Logf("%s: %d connections to Postgres, %d of %d used", who, n, b.used, b.limit)
	if b.used > b.limit {
		t.Errorf("%s: %d connections bring Postgres to %d of the %d it allows", who, n, b.used, b.limit)
	}
}

// pgbouncer is what the pooler's configuration allows.
type pgbouncer struct {
	maxClients  int // max_client_conn
	serverConns int // server connections to Postgres, every replica together
}

// readPgbouncer reads the PgBouncer Deployment and its pgbouncer.ini, and
// checks that it pools transactions and knows the lab's user.
func readPgbouncer(t *testing.T, r *rendered) *pgbouncer {
	t.Helper()
	ini := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(configMap(t, r, "pgbouncer").Data["pgbouncer.ini"]))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok && !strings.HasPrefix(strings.TrimSpace(k), ";") {
			ini[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	num := func(key string, def int) int {
		if ini[key] == "" {
			return def
		}
		n, err := strconv.Atoi(ini[key])
		if err != nil {
			t.Fatalf("pgbouncer.ini: %s = %q", key, ini[key])
		}
		return n
	}
	if ini["pool_mode"] != "transaction" {
		t.Errorf("pgbouncer.ini: pool_mode = %q, want transaction", ini["pool_mode"])
	}
	// PgBouncer's defaults: max_client_conn 100, default_pool_size 20, no
	// reserve, max_db_connections unlimited.
	perDB := num("default_pool_size", 20) + num("reserve_pool_size", 0)
	if m := num("max_db_connections", 0); m > 0 && m < perDB {
		perDB = m
	}
	d := deployment(t, r, "pgbouncer")
	b := &pgbouncer{maxClients: num("max_client_conn", 100), serverConns: maxPods(t, d) * perDB}

	users := secret(t, r, "pgbouncer-users").Data["userlist.txt"]
	password := string(secret(t, r, "postgres").Data["password"])
	if want := `"orderlab" "` + password + `"`; !strings.Contains(string(users), want) {
		t.Errorf("userlist.txt %q does not give the user orderlab Postgres' password", users)
	}
	return b
}
