package attack

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Shard is one generator's share of an open run's arrival schedule, so that
// Count generators send one schedule between them without overlap: of the
// requests the Pacer schedules (0, 1, 2, ...), generator Index sends Index,
// Index+Count, Index+2·Count, ... Each request keeps the due time the whole
// schedule gives it, so the generators' corrected latencies, merged, are
// those of one generator sending the whole schedule.
//
// The zero Shard, like any Shard with Count <= 1, is the whole schedule.
type Shard struct {
	Index int // 0 <= Index < Count
	Count int
}

// Whole reports whether s is the whole schedule.
func (s Shard) Whole() bool { return s.Count <= 1 }

// String returns "Index/Count", the form ParseShard reads; "" for the whole schedule.
func (s Shard) String() string {
	if s.Whole() {
		return ""
	}
	return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count)
}

// ParseShard reads "i/n": generator i (counted from 0) of n.
func ParseShard(v string) (Shard, error) {
	i, n, ok := strings.Cut(v, "/")
	index, err1 := strconv.Atoi(i)
	count, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("%q: want i/n, e.g. 0/3", v)
	}
	s := Shard{Index: index, Count: count}
	return s, s.validate()
}

func (s Shard) validate() error {
	if s.Count < 0 || s.Index < 0 || (s.Count > 0 && s.Index >= s.Count) || (s.Count == 0 && s.Index != 0) {
		return fmt.Errorf("shard %d/%d: want 0 <= i < n", s.Index, s.Count)
	}
	return nil
}

// Pacer returns the pacer of s's share of p's schedule: its request j is
// request j·Count+Index of p, due when p has it due.
func (s Shard) Pacer(p Pacer) Pacer {
	if s.Whole() {
		return p
	}
	return PacerFunc(func(j int64) time.Duration { return p.Due(j*int64(s.Count) + int64(s.Index)) })
}

// Requests returns how many of the schedule's first total requests are
// s's; 0 (no bound) stays 0. [Config.Validate] makes total at least Count,
// so that every share has a request.
func (s Shard) Requests(total int64) int64 {
	if s.Whole() || total <= 0 {
		return total
	}
	n, i := int64(s.Count), int64(s.Index)
	return (total - i + n - 1) / n
}
