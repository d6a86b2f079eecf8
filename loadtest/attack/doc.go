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
// The engine is a library so that other programs (the scenario runner) can
// drive it: build a [Config], call [New], then [Attack.Run].
package attack
