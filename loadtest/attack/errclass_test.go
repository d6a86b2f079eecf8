package attack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestClassify(t *testing.T) {
	wrap := func(err error) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}
	}
	cases := map[error]ErrClass{
		wrap(syscall.ECONNREFUSED):                  ErrRefused,
		wrap(syscall.ECONNRESET):                    ErrReset,
		fmt.Errorf("write: %w", syscall.EPIPE):      ErrReset,
		io.ErrUnexpectedEOF:                         ErrReset,
		errServerClosed:                             ErrReset,
		context.DeadlineExceeded:                    ErrTimeout,
		fmt.Errorf("x: %w", os.ErrDeadlineExceeded): ErrTimeout,
		errors.New("strange"):                       ErrOther,
	}
	for err, want := range cases {
		if got := Classify(err); got != want {
			t.Errorf("Classify(%v) = %v, want %v", err, got, want)
		}
	}
}

func TestSourceAddrsSpreadsOnlyWhenOneAddressIsShort(t *testing.T) {
	lo := netip.MustParseAddr("127.0.0.1")
	if got, err := SourceAddrs(lo, 20000, 28232); err != nil || got != nil {
		t.Errorf("20000 conns: %v, %v; want one address", got, err)
	}
	got, err := SourceAddrs(lo, 60000, 28232)
	if err != nil || len(got) != 3 || got[0].String() != "127.0.0.1" || got[2].String() != "127.0.0.3" {
		t.Errorf("60000 conns: %v, %v; want 127.0.0.1-3", got, err)
	}
	if _, err := SourceAddrs(netip.MustParseAddr("10.0.0.1"), 60000, 28232); err == nil {
		t.Error("non-loopback target: no error")
	}
}

func TestEnsureOpenFilesNamesLimitAndNeed(t *testing.T) {
	if err := EnsureOpenFiles(10); err != nil {
		t.Fatalf("10 files: %v", err)
	}
	err := EnsureOpenFiles(1 << 30)
	if err == nil {
		t.Fatal("2^30 files: no error")
	}
	if msg := err.Error(); !strings.Contains(msg, "open-files limit") || !strings.Contains(msg, "1073741824") {
		t.Errorf("error %q does not give the limit and the need", msg)
	}
}
