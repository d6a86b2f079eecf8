package httpserver

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/lesismal/nbio/logging"
)

// nbio logs through one package-level logger. It goes to the logger of the
// nbio server built last (a process runs one), as JSON like every other
// line: nbio's info lines at debug level, its warnings and errors at warn,
// as net/http's ErrorLog is.
var (
	nbioLog     atomic.Pointer[slog.Logger]
	nbioLogOnce sync.Once
)

func setNBIOLogger(l *slog.Logger) {
	nbioLog.Store(l)
	nbioLogOnce.Do(func() { logging.SetLogger(nbioLogger{}) })
}

type nbioLogger struct{}

func (nbioLogger) Debug(format string, v ...any) { logNBIO(slog.LevelDebug, format, v) }
func (nbioLogger) Info(format string, v ...any)  { logNBIO(slog.LevelDebug, format, v) }
func (nbioLogger) Warn(format string, v ...any)  { logNBIO(slog.LevelWarn, format, v) }
func (nbioLogger) Error(format string, v ...any) { logNBIO(slog.LevelWarn, format, v) }

func logNBIO(level slog.Level, format string, v []any) {
	l := nbioLog.Load()
	if l == nil || !l.Enabled(context.Background(), level) {
		return
	}
	l.Log(context.Background(), level, fmt.Sprintf(format, v...), "server", "nbio")
}
