package leg

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"sweep/configs"
	"sweep/internal/usage"
	"sweep/sweep/run"
)

// lockLegDir makes dir (if needed) and takes its lock, the one sweep run
// and a sweep hold in their output directories (run.LockOutDir:
// run.LockFile holding this process's pid), and returns its release. A
// directory whose lock another process holds (another sweep ab run or
// calibrate on the same --out) is a *usage.Error naming that process:
// nothing of the directory is touched and no process is stopped.
func lockLegDir(dir string) (func(), error) {
	release, err := run.LockOutDir(dir)
	if oe, ok := errors.AsType[*run.OutDirError](err); ok && oe.Holder != "" {
		return nil, usage.Refusef("--out %s: %s is running this leg: wait for it to end, or give another --out", dir, oe.Holder)
	}
	if err != nil {
		return nil, fmt.Errorf("leg directory: %w", err)
	}
	return release, nil
}

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
