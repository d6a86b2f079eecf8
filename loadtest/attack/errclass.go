package attack

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// ErrClass groups transport errors the way an operator reads them.
type ErrClass int

// The error classes, in report order.
const (
	ErrRefused   ErrClass = iota // nothing listened: ECONNREFUSED
	ErrReset                     // the peer dropped the connection: ECONNRESET, EPIPE, early EOF
	ErrTimeout                   // the request timeout or a dial timeout expired
	ErrOther                     // anything else
	ErrThrottled                 // not sent: the client's adaptive throttler refused it (RetryThrottle)
)

// ErrClasses lists every class, in report order.
var ErrClasses = [...]ErrClass{ErrRefused, ErrReset, ErrTimeout, ErrOther, ErrThrottled}

// String returns the class's report name.
func (c ErrClass) String() string {
	switch c {
	case ErrRefused:
		return "refused"
	case ErrReset:
		return "reset"
	case ErrTimeout:
		return "timeout"
	case ErrThrottled:
		return "throttled"
	default:
		return "other"
	}
}

// Classify returns the class of a transport error.
func Classify(err error) ErrClass {
	var ne net.Error
	switch {
	case errors.Is(err, errThrottled):
		return ErrThrottled
	case errors.Is(err, syscall.ECONNREFUSED):
		return ErrRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, errServerClosed):
		return ErrReset
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return ErrTimeout
	default:
		return ErrOther
	}
}

// errServerClosed reports a keep-alive connection the server closed before answering.
var errServerClosed = errors.New("server closed the connection before answering")
