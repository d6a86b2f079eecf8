// Package tasks runs many small background jobs on goroutines (one per job)
// or on a fixed pool of workers fed from a channel, and measures how long all
// of them take: the published experiment D (100,000 jobs of 50 ms, Java's
// @Async pool versus virtual threads) and pitfall 6, CPU-bound work, where no
// concurrency model adds cores (docs/scenarios/hundred-thousand-tasks.md and cpu-bound-parity.md).
package tasks
