// Package scrape reads a service's Prometheus /metrics during a load run:
// once before, at an interval during and once after. It keeps the figures
// the lab compares across concurrency models (goroutines, OS threads, RSS,
// pool use, queue length, pool-acquire wait, rejections) as a time series,
// and summarises them (peaks, the acquire-wait p99 over the run, the
// rejections during it).
package scrape
