package loadgen

import (
	"context"
	"sync"
	"time"
)

// idleGuard implements aiperf's --system-idle-gap-cap-seconds: when
// every lane is waiting out a recorded idle gap (no request in flight or
// about to be sent), all pending waits are shortened by the same amount
// so the earliest one ends within the cap. Relative spacing and order
// across lanes are kept; the benchmark just does not measure long
// stretches with no server work.
type idleGuard struct {
	cap      time.Duration // 0 = off
	mu       sync.Mutex
	busy     int // lanes not sleeping
	sleepers map[*sleeper]struct{}
	jumps    int // how many times the guard shifted the timers
}

type sleeper struct {
	deadline time.Time
	kick     chan struct{} // deadline moved
}

func newIdleGuard(cap time.Duration, lanes int) *idleGuard {
	return &idleGuard{cap: cap, busy: lanes, sleepers: map[*sleeper]struct{}{}}
}

// sleep waits d like sleepCtx, as one lane of the guard. It reports
// whether the wait ended normally (false when ctx is done).
func (g *idleGuard) sleep(ctx context.Context, d time.Duration) bool {
	if g.cap <= 0 {
		return sleepCtx(ctx, d)
	}
	s := &sleeper{deadline: time.Now().Add(d), kick: make(chan struct{}, 1)}
	g.mu.Lock()
	g.busy--
	g.sleepers[s] = struct{}{}
	g.rebalanceLocked()
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		delete(g.sleepers, s)
		g.busy++
		g.mu.Unlock()
	}()
	for {
		g.mu.Lock()
		left := time.Until(s.deadline)
		g.mu.Unlock()
		if left <= 0 {
			return ctx.Err() == nil
		}
		t := time.NewTimer(left)
		select {
		case <-t.C:
			return ctx.Err() == nil
		case <-s.kick:
			t.Stop()
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
}

// join adds a participant (a parallel subagent stream) that counts as
// busy until it leaves.
func (g *idleGuard) join() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.busy++
}

// leave removes a participant for good (a lane that stopped issuing, a
// subagent stream that finished).
func (g *idleGuard) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.busy--
	g.rebalanceLocked()
}

func (g *idleGuard) rebalanceLocked() {
	if g.cap <= 0 || g.busy > 0 || len(g.sleepers) == 0 {
		return
	}
	var earliest time.Time
	for s := range g.sleepers {
		if earliest.IsZero() || s.deadline.Before(earliest) {
			earliest = s.deadline
		}
	}
	excess := time.Until(earliest) - g.cap
	if excess <= 0 {
		return
	}
	g.jumps++
	for s := range g.sleepers {
		s.deadline = s.deadline.Add(-excess)
		select {
		case s.kick <- struct{}{}:
		default: // already kicked; the lane re-reads its deadline
		}
	}
}

// sleepCtx waits d or until ctx is done; it reports whether d elapsed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
