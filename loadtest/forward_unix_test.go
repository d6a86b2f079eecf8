//go:build unix

package main

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A stop reaches the forwarded mode: SIGTERM to loadtest ends `lab
// dbproxy` as its own SIGTERM does, exit 0.
func TestAStopReachesTheForwardedMode(t *testing.T) {
	loadtest := buildBoth(t, true)
	cmd := exec.Command(loadtest, "dbproxy", "-listen", "127.0.0.1:0", "-upstream", "127.0.0.1:1", "-control", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "dbproxy: ") {
		_ = cmd.Process.Kill()
		t.Fatalf("lab dbproxy did not start: %q, %v; stderr %q", line, err, stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("after SIGTERM: %v; stderr %q", err, stderr.String())
		}
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("loadtest dbproxy still ran a minute after SIGTERM; stderr %q", stderr.String())
	}
}
