// Package attack is the load engine of loadtest: it sends requests to one
// target in one of three shapes (burst, closed loop, open loop at a constant or
// ramped arrival rate) and measures them with HDR histograms.
//
// Open runs are coordinated-omission correct: each request has an intended
// send time given by a [Pacer], and its latency is measured from that time
// (corrected) as well as from the moment it was actually written (uncorrected).
// A server that stalls therefore shows the stall in the corrected figures even
// though the generator, having no free connection, could not send during it.
//
// Its default HTTP client is hand-written (rawhttp.go, and sock_linux.go
// for its socket on Linux): an HTTP/1.1 keep-alive client that parses
// responses without allocating and reads and writes with raw system calls.
// It stays because it is the reason loadtest costs what wrk costs: in
// `make bench-loadtest` (closed loop, 50 connections, client and server
// pinned to a core each, HDR recording and the metrics scrape on) it did
// 1.02x [0.96-1.08] and 0.82x [0.77-0.95] of wrk's requests per client
// CPU-second in two blocks, against net/http's client's 0.49x and 0.37x
// (2026-12-03 09:14 and 09:21 UTC, medians of 3; 1.00x and 0.94x against
// 0.41x and 0.47x on 2026-12-02; loadtest/README.md, "Efficiency"). When
// net/http's client comes within a few percent of it, the hand-written one
// should go.
//
// The engine is a library so that other programs (the scenario runner) can
// drive it: build a [Config], call [New], then [Attack.Run].
package attack
