package front

import (
	"bytes"
	"sync"
)

// logTail keeps the last lines written to it.
type logTail struct {
	mu   sync.Mutex
	buf  []string
	part []byte
}

const logLines = 200

func (l *logTail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part = append(l.part, p...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			break
		}
		l.buf = append(l.buf, string(l.part[:i]))
		l.part = l.part[i+1:]
	}
	if n := len(l.buf); n > logLines {
		l.buf = append([]string(nil), l.buf[n-logLines:]...)
	}
	return len(p), nil
}

func (l *logTail) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string{}, l.buf...)
}
