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
// 1.00x [0.90-1.13] and 0.94x [0.93-1.01] of wrk's requests per client
// CPU-second in two blocks, against net/http's client's 0.41x and 0.47x
// (2026-12-02 06:42 and 06:54 UTC, medians of 3; loadtest/README.md,
// "Efficiency"). When net/http's client comes within a
// few percent of it, the hand-written one should go.
//
// The engine is a library so that other programs (the scenario runner) can
// drive it: build a [Config], call [New], then [Attack.Run].
package attack
