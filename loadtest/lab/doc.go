// Package lab runs the three orderlab services as local processes for a
// scenario: each built binary started from a directory, on free loopback
// ports, with the scenario's environment, against a database of its own that
// is created before and dropped after. It talks to the services only over
// HTTP and to Postgres only with SQL: it imports nothing from services/.
package lab
