// Package tasks runs many small background jobs on goroutines (one per job)
// or on a fixed pool of workers fed from a channel, and measures how long all
// of them take: the published experiment of scenario hundred-thousand-tasks
// (100,000 jobs of 50 ms, Java's @Async pool versus virtual threads) and
// scenario cpu-bound-parity, CPU-bound work, where no concurrency model adds
// cores (docs/scenarios/hundred-thousand-tasks.md and cpu-bound-parity.md).
package tasks
