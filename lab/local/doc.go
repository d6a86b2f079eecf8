// Package local runs the orderlab services as local processes, for a scenario
// run and for the end-to-end test of the lab: each built binary started from
// a directory, on free loopback ports, with the run's environment, against
// the database it is given (the scenario runner creates one per scenario
// with internal/pgdb). It talks to the services only over HTTP: it imports
// nothing from services/. Starting a process, waiting for it and stopping it
// are internal/proc's; lab adds what makes a process an orderlab service.
package local
