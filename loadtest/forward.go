package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/orderlab/orderlab/internal/cli"
)

// labStopWait is how long a forwarded lab mode has, once told to stop, to
// put the services' knobs back and write its results.
const labStopWait = 2 * time.Minute

// forwardToLab runs mode, which moved to the lab command, as `lab mode
// args...` with the lab binary beside this one (never one found on PATH,
// which may be of another version), says so once on stderr, and returns its
// exit code. A stop (ctx done) reaches it as SIGTERM.
func forwardToLab(ctx context.Context, mode string, args []string, stdout, stderr io.Writer) int {
	lab, err := labBeside()
	if err != nil {
		fmt.Fprintf(stderr, "loadtest %s: this mode is `lab %s` now, and %v; build it (make build) or run `go run ./lab %s ...`\n", mode, mode, err, mode)
		return cli.ExitUsage
	}
	fmt.Fprintf(stderr, "loadtest %s: this mode is `lab %s` now; running %s (loadtest will stop forwarding it in the next release)\n", mode, mode, lab)
	cmd := exec.CommandContext(ctx, lab, append([]string{mode}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	cmd.Cancel = func() error {
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil { // Windows has no SIGTERM
			return cmd.Process.Kill()
		}
		return nil
	}
	cmd.WaitDelay = labStopWait
	err = cmd.Run()
	// After a stop, Run reports the stop even when lab ended by itself:
	// its exit code is the answer whenever it exited.
	if st := cmd.ProcessState; st != nil && st.ExitCode() >= 0 {
		return st.ExitCode()
	}
	fmt.Fprintf(stderr, "loadtest %s: %v\n", mode, err)
	return cli.ExitFail
}

// labBeside is the path of the lab binary in this binary's directory.
func labBeside() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	name := "lab"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	lab := filepath.Join(filepath.Dir(self), name)
	if fi, err := os.Stat(lab); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("there is no lab binary beside loadtest (%s)", lab)
	}
	return lab, nil
}
