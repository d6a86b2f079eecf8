package pgdb

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Describe tells where dsn points, for a log line or an error message:
// host, port, database, user, whether TLS is on, and the options that hold
// no secret (connect_timeout, application_name). It parses dsn the way the
// pool does (pgxpool.ParseConfig), so both forms are understood: a URL
// (postgres://user:pw@host/db?...) and keyword/value (host=... password=...).
// Nothing else of dsn is ever in its answer: no password, sslpassword, key,
// passfile or its content. A dsn that does not parse is described by its
// form and the class of the parse error only, since a parse error may quote
// the string, password and all.
func Describe(dsn string) string {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return fmt.Sprintf("unparsable %s connection string (%s)", formOf(dsn), errorClass(err))
	}
	c := cfg.ConnConfig.Config
	// Fallbacks repeat a host for sslmode=prefer/allow: one entry per server.
	hosts, ports := []string{c.Host}, []string{strconv.Itoa(int(c.Port))}
	tls := c.TLSConfig != nil
	for _, f := range c.Fallbacks {
		port := strconv.Itoa(int(f.Port))
		if f.Host != hosts[len(hosts)-1] || port != ports[len(ports)-1] {
			hosts, ports = append(hosts, f.Host), append(ports, port)
		}
		tls = tls || f.TLSConfig != nil
	}
	parts := []string{
		"host=" + quote(strings.Join(hosts, ",")),
		"port=" + strings.Join(ports, ","),
		"database=" + quote(c.Database),
		"user=" + quote(c.User),
		"tls=" + map[bool]string{true: "on", false: "off"}[tls],
	}
	if c.ConnectTimeout > 0 {
		parts = append(parts, "connect_timeout="+c.ConnectTimeout.String())
	}
	var names []string
	for k := range c.RuntimeParams {
		if publicParams[k] {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		parts = append(parts, k+"="+quote(c.RuntimeParams[k]))
	}
	return strings.Join(parts, " ")
}

// publicParams are the run-time parameters Describe shows: settings a
// reader of the log needs, never a credential.
var publicParams = map[string]bool{"application_name": true, "search_path": true, "timezone": true}

// formOf names the form of a connection string without reading it.
func formOf(dsn string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return "URL"
	}
	return "keyword/value"
}

// errorClass names the kind of a parse error by the type of its innermost
// cause: never its text, which may quote the connection string.
func errorClass(err error) string {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return fmt.Sprintf("%T", err)
		}
		err = u.Unwrap()
	}
}

// quote leaves a plain value as it is and quotes one with spaces, quotes
// or control characters, so that a log line cannot be forged through it.
func quote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == '"' || r == '\'' || r == '\\' || r >= 0x7f }) {
		return s
	}
	return strconv.Quote(s)
}
