package api

// blockingSleep(d) waits d while holding its goroutine's OS thread, the
// Go shape of a blocking call in a thread-per-request server (docs/scenarios/os-thread-pinning.md). How it holds the thread depends on the platform:
//
//   - Linux and the BSDs (blocksleep_nanosleep.go): the nanosleep system
//     call. The thread is blocked in the kernel for the whole wait; the
//     runtime's sysmon notices a thread stuck in a system call (after
//     20 µs to 10 ms) and hands its P to another thread.
//   - macOS (blocksleep_darwin.go): select(2) with no descriptors and a
//     timeout, through golang.org/x/sys/unix (the syscall package has no
//     nanosleep on macOS). The same: a thread blocked in the kernel.
//   - Elsewhere, Windows included (blocksleep_other.go): the goroutine
//     locks itself to its thread (runtime.LockOSThread) and sleeps on a
//     Go timer. A locked thread whose goroutine waits cannot run any other
//     goroutine, so it parks in the runtime for the whole wait and the
//     scheduler starts another thread: go_threads climbs with the waiters
//     as on Linux. What differs: the thread waits in the runtime, not in a
//     system call, so the P is handed off at once rather than by sysmon.
