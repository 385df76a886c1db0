package leg

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"

	"sweep/configs"
)

// defaultLockTimeout is SMG's nightly wait for its host lock (flock -w 9000).
const defaultLockTimeout = 9000 * time.Second

func lockTimeout(l *configs.ABLeg) time.Duration {
	if l.Timeouts.Lock > 0 {
		return l.Timeouts.Lock
	}
	return defaultLockTimeout
}

// lockHost takes an exclusive flock on path (created if missing, never
// through a symlink), polling once a second until timeout or ctx is done,
// and returns its release. The descriptor is close-on-exec, so no server
// the leg starts inherits the lock (SMG's launch_arm.sh 9>&-).
func lockHost(ctx context.Context, path string, timeout time.Duration) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("host lock %s: %w", path, err)
	}
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if err != syscall.EWOULDBLOCK {
			f.Close()
			return nil, fmt.Errorf("host lock %s: %w", path, err)
		}
		if !time.Now().Before(deadline) {
			f.Close()
			return nil, fmt.Errorf("host lock %s: still held by another leg after %s (timeouts.lock); its holder is another job on this host", path, timeout)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, context.Cause(ctx)
		case <-tick.C:
		}
	}
}
