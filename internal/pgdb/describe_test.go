package pgdb_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/orderlab/orderlab/internal/pgdb"
	"github.com/orderlab/orderlab/internal/pgtest"
)

// Describe shows where a connection string points, in both forms, and
// never a secret: not the password, not sslpassword, not a passfile's
// content, not even when the string does not parse.
func TestDescribeHidesEverySecretInBothForms(t *testing.T) {
	passfile := filepath.Join(t.TempDir(), "pgpass")
	if err := os.WriteFile(passfile, []byte("db:5432:orders:app:fromPassfile\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, dsn, want string }{
		{"URL", "postgres://app:s3cret@db:5433/orders?sslmode=disable&application_name=svc&connect_timeout=3",
			"host=db port=5433 database=orders user=app tls=off connect_timeout=3s application_name=svc"},
		{"URL, password as a parameter", "postgresql://app@db/orders?password=s3cret&sslpassword=s3cretToo&sslmode=require",
			"host=db port=5432 database=orders user=app tls=on"},
		{"keyword/value", "host=db port=5433 user=app password=s3cret dbname=orders sslmode=disable",
			"host=db port=5433 database=orders user=app tls=off"},
		{"keyword/value, quoted", "host=db user=app password='s3 cret\\'x' dbname=orders sslmode=disable sslpassword=s3cretToo",
			"host=db port=5432 database=orders user=app tls=off"},
		{"keyword/value, several hosts", "host=a,b port=1,2 user=app password=s3cret dbname=orders sslmode=prefer",
			"host=a,b port=1,2 database=orders user=app tls=on"},
		{"passfile", "host=db user=app dbname=orders sslmode=disable passfile=" + passfile,
			"host=db port=5432 database=orders user=app tls=off"},
		{"unparsable URL", "postgres://app:s3cret@db:port/orders", "unparsable URL connection string"},
		{"unparsable keyword/value", "host=db password='s3cret", "unparsable keyword/value connection string"},
		{"unparsable, bad option", "host=db password=s3cret sslmode=s3cretmode", "unparsable keyword/value connection string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := pgdb.Describe(tc.dsn)
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("Describe = %q, want %q", got, tc.want)
			}
			for _, secret := range []string{"s3cret", "fromPassfile", passfile} {
				if strings.Contains(got, secret) {
					t.Errorf("Describe = %q: shows %q", got, secret)
				}
			}
		})
	}
	// The passfile was read: the secret is there to leak.
	if c, err := pgconn.ParseConfig(cases[5].dsn); err != nil || c.Password != "fromPassfile" {
		t.Fatalf("passfile not read: %v", err)
	}
}

// Create and Ping take the keyword/value form too, and an error about a
// keyword/value string names the server, never its password.
func TestKeywordValueForm(t *testing.T) {
	c, err := pgconn.ParseConfig(pgtest.BaseURL())
	if err != nil {
		t.Fatal(err)
	}
	kv := "host=" + c.Host + " port=" + strconv.Itoa(int(c.Port)) + " user=" + c.User + " dbname=" + c.Database + " sslmode=disable"
	if c.Password != "" {
		kv += " password='" + strings.ReplaceAll(c.Password, "'", `\'`) + "'"
	}
	db, err := pgdb.Create(context.Background(), kv, "orderlab_pgdb_kv")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Drop(context.Background()) })
	if n := count(t, db.URL, "SELECT count(*) FROM pg_database WHERE datname = current_database() AND datname = 'orderlab_pgdb_kv'"); n != 1 {
		t.Errorf("Create's URL %q does not point at the new database", pgdb.Describe(db.URL))
	}
	err = pgdb.Ping(context.Background(), "host=127.0.0.1 port=1 user=u password=s3cret dbname=x connect_timeout=5")
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "host=127.0.0.1 port=1") {
		t.Errorf("Ping error %v: want the server named and the password hidden", err)
	}
	err = pgdb.Ping(context.Background(), "host=127.0.0.1 password='s3cret")
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Ping of an unparsable string: %v", err)
	}
}
