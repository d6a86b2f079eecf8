package setup

import "testing"

func TestReachesReadsBothFormsOfTheDatabaseAddress(t *testing.T) {
	// host:port (a proxy on the same host as Postgres): the port decides.
	for dsn, want := range map[string]bool{
		"host=127.0.0.1 port=6001 database=orderlab user=orderlab tls=off":   true,
		"host=127.0.0.1 port=5432 database=orderlab user=orderlab tls=off":   false,
		"postgres://orderlab:xxxxx@127.0.0.1:6001/orderlab?sslmode=disable":  true,
		"postgres://orderlab:xxxxx@127.0.0.1:5432/orderlab?sslmode=disable":  false,
		"postgres://orderlab:xxxxx@127.0.0.1:60011/orderlab?sslmode=disable": false,
	} {
		if got := reaches(dsn, "127.0.0.1:6001"); got != want {
			t.Errorf("reaches(%q, 127.0.0.1:6001) = %v, want %v", dsn, got, want)
		}
	}
	for dsn, want := range map[string]bool{
		"host=dbproxy port=5432 database=orderlab user=orderlab tls=off":         true,
		"postgres://orderlab:xxxxx@dbproxy:5432/orderlab?sslmode=disable":        true,
		"host=postgres port=5432 database=orderlab user=dbproxy tls=off":         false,
		"postgres://orderlab:xxxxx@postgres:5432/dbproxy?sslmode=disable":        false,
		"host=dbproxy.example port=5432 database=orderlab user=orderlab tls=off": false,
	} {
		if got := reaches(dsn, "dbproxy"); got != want {
			t.Errorf("reaches(%q, dbproxy) = %v, want %v", dsn, got, want)
		}
	}
}
