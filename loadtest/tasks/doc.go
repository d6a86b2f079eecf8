// Package tasks runs many small background jobs on goroutines (one per job)
// or on a fixed pool of workers fed from a channel, and measures how long all
// of them take: experiment D of REFERENCE.md (100,000 jobs of 50 ms, Java's
// @Async pool versus virtual threads) and the CPU-bound parity of pitfall 6.
package tasks
