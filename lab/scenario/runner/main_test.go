package runner

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/orderlab/orderlab/internal/faultproxy"
)

// The runner's in-process fault proxy (db_latency) may leave toxiproxy's
// teardown goroutine behind: see faultproxy.LeakyPipe.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction(faultproxy.LeakyPipe))
}
