package loadgen

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"
)

var inf = math.Inf(1)

// vjoin makes every lane a participant at the run's time.
func (r *runner) vjoin(ctx context.Context, lanes []*lane) error {
	ids := make([]string, len(lanes))
	for i := range lanes {
		ids[i] = fmt.Sprintf("lane%d", i)
	}
	parts, err := r.vc.join(ctx, r.main, ids...)
	if err != nil {
		return err
	}
	for i, l := range lanes {
		l.p = parts[i]
		l.sess.p = l.p
	}
	return nil
}

// vwait blocks waiter until n members of the returned group have
// arrived; the waiter's clock then continues at the latest member time.
func (r *runner) vwait(ctx context.Context, n int, waiter *vpart) *vgroup {
	g := newVGroup(r.vc, n, waiter)
	g.warn = func(err error) { r.logf("warning: virtual clock: %v", err) }
	if err := r.vc.block(ctx, waiter); err != nil {
		g.warn(err) // an engine that failed fails the requests too
	}
	return g
}

// vsleep waits d simulated seconds on p's clock (cap: the idle-gap cap,
// 0 none). It reports false when the lane must stop: ctx is done, the
// engine failed, or the wake-up is at or after the end of issuing.
func (r *runner) vsleep(ctx context.Context, p *vpart, d float64, cap time.Duration) bool {
	until := p.now + d
	if until >= r.issueEnd {
		return false
	}
	return r.vc.sleep(ctx, p, until, cap) && r.issuing(ctx, p)
}

// sortRecords orders the records by simulated credit time, then by
// request id: the order of the timeline, the same in every run of a seed.
func (r *runner) sortRecords() {
	slices.SortStableFunc(r.records, func(a, b *record) int {
		return cmp.Or(cmp.Compare(a.Metadata.CreditIssuedNs, b.Metadata.CreditIssuedNs),
			cmp.Compare(a.Metadata.XRequestID, b.Metadata.XRequestID))
	})
}
