package leg

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"sweep/sweep/run"
)

// keepEarlierServer moves what an earlier run's server left in dir (an
// arm's ServerDir: its logs, command files and server.json) aside to
// dir.<n>, the first n free, so the server a resumed arm starts there
// does not replace the evidence of the interrupted one. It first takes
// dir's lock (run.LockOutDir), which a live server holds until it has
// stopped: a directory another process holds is an error, never moved.
// Holding it, it stops the processes an earlier run left behind there
// (run.StopLeftovers: a sweep killed with kill -9), so no old engine
// lives on beside the new one. It returns the directory it moved dir to:
// "" when dir does not exist or holds nothing but its lock.
func keepEarlierServer(dir string) (string, error) {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	unlock, err := run.LockOutDir(dir)
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := run.StopLeftovers(dir, run.LeftoverGrace); err != nil {
		return "", fmt.Errorf("server directory %s: cannot stop the processes an earlier run left: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	if len(entries) == 0 || len(entries) == 1 && entries[0].Name() == run.LockFile {
		return "", nil
	}
	to := fmt.Sprintf("%s.%d", dir, freeSuffix(dir))
	if err := os.Rename(dir, to); err != nil {
		return "", fmt.Errorf("server directory %s: cannot move the earlier server's files aside: %w", dir, err)
	}
	return to, nil
}

// freeSuffix is the first n from 1 for which no path.<n> exists, for
// every path given: the number that moves them all aside together.
func freeSuffix(paths ...string) int {
	for n := 1; ; n++ {
		taken := slices.ContainsFunc(paths, func(p string) bool {
			_, err := os.Lstat(fmt.Sprintf("%s.%d", p, n))
			return !errors.Is(err, fs.ErrNotExist)
		})
		if !taken {
			return n
		}
	}
}
