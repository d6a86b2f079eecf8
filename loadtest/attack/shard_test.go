package attack

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// TestShardsShareOneSchedule runs one open schedule (1000 requests at
// 1000/s) from one generator, then from three generators at once, each with
// a third of it (-shard 0/3, 1/3, 2/3), and merges the three: the request
// count, the status counts and every histogram must be the same.
//
// The server answers in 1 to 7 ms depending on when a request arrives, and
// stalls the requests that arrive between 200 and 400 ms until 400 ms, so
// the corrected latencies reach 200 ms and the same requests are late in
// both runs only if each arrives when the whole schedule has it due.
//
// Two runs on a shared machine differ by scheduling noise, so the test runs
// each in a synctest bubble, where time is virtual and advances only when
// every goroutine waits, and the server is a function of that time called
// in-process (a fake transport): a loopback socket would leave the bubble's
// clock standing while a request is in flight. The latencies are then exact,
// and the histograms must be equal, not merely close.
func TestShardsShareOneSchedule(t *testing.T) {
	whole := runShards(t, Shard{})
	merged := runShards(t, Shard{0, 3}, Shard{1, 3}, Shard{2, 3})

	if whole.Sent != 1000 || merged.Sent != whole.Sent || merged.Unsent != 0 || whole.Unsent != 0 {
		t.Fatalf("sent %d (unsent %d) by one generator, %d (unsent %d) by three; want 1000 each",
			whole.Sent, whole.Unsent, merged.Sent, merged.Unsent)
	}
	if whole.Status[200] != 1000 || merged.Status[200] != 1000 || whole.Late != merged.Late {
		t.Errorf("status %v / %v, late %d / %d", whole.Status, merged.Status, whole.Late, merged.Late)
	}
	if p99 := ms(whole.Success.ValueAtQuantile(99)); p99 < 150*time.Millisecond {
		t.Errorf("p99 %v: the stall should show in the corrected latencies", p99)
	}
	for name, h := range map[string][2]*hdr.Histogram{
		"success":             {whole.Success, merged.Success},
		"success uncorrected": {whole.SuccessUncorrected, merged.SuccessUncorrected},
		"scheduler lag":       {whole.SchedulerLag, merged.SchedulerLag},
	} {
		if !h[0].Equals(h[1]) {
			for _, q := range []float64{50, 90, 99, 99.9, 100} {
				t.Logf("%s p%v: one generator %v, three %v", name, q, ms(h[0].ValueAtQuantile(q)), ms(h[1].ValueAtQuantile(q)))
			}
			t.Errorf("%s: the merged shards' histogram (%d values) differs from the whole schedule's (%d)", name, h[1].TotalCount(), h[0].TotalCount())
		}
	}
}

// runShards runs the test schedule once per shard, all at once in one
// bubble, and returns the merged result.
func runShards(t *testing.T, shards ...Shard) *Result {
	merged := NewResult()
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		server := TransportFunc(func() Client {
			return ClientFunc(func(*Request) (Response, error) {
				arrived := time.Since(t0)
				switch {
				case arrived >= 200*time.Millisecond && arrived < 400*time.Millisecond:
					time.Sleep(400*time.Millisecond - arrived + time.Millisecond)
				default:
					time.Sleep(time.Millisecond + arrived%(7*time.Millisecond))
				}
				return Response{Status: 200}, nil
			})
		})
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, s := range shards {
			wg.Go(func() {
				a, err := New(Config{Mode: ModeOpen, Concurrency: 300, Requests: 1000, Pacer: ConstantPacer{Rate: 1000},
					Shard: s, Transport: server, Target: Target{URL: "http://127.0.0.1:1/"}, timerWaits: true})
				if err != nil {
					t.Error(err)
					return
				}
				res, err := a.Run(context.Background())
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				merged.Merge(res)
				mu.Unlock()
			})
		}
		wg.Wait()
	})
	return merged
}

func TestShardSplitsTheSchedule(t *testing.T) {
	p := ConstantPacer{Rate: 10}
	seen := map[time.Duration]int{}
	var total int64
	for i := range 3 {
		s := Shard{Index: i, Count: 3}
		n := s.Requests(10) // 4, 3, 3
		total += n
		sp := s.Pacer(p)
		for j := range n {
			seen[sp.Due(j)]++
		}
	}
	if total != 10 || len(seen) != 10 {
		t.Fatalf("three shards of 10 requests sent %d requests at %d distinct times", total, len(seen))
	}
	for i := range int64(10) {
		if seen[p.Due(i)] != 1 {
			t.Errorf("request %d (due %v) sent %d times", i, p.Due(i), seen[p.Due(i)])
		}
	}
	for _, v := range []string{"3/3", "-1/3", "1", "a/b", "1/0"} {
		if _, err := ParseShard(v); err == nil {
			t.Errorf("ParseShard(%q) accepted", v)
		}
	}
	if s, err := ParseShard("2/3"); err != nil || s != (Shard{2, 3}) || s.String() != "2/3" {
		t.Errorf("ParseShard(2/3) = %v, %v", s, err)
	}
}
