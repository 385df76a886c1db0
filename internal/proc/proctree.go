package proc

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// descendants returns the pids of every live descendant of root, found by
// walking the parent links in /proc. A process that has called setsid or
// setpgid is still found, as long as its parent chain leads to root.
func descendants(root int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, state, ok := statOf(pid)
		if !ok || state == "Z" {
			continue
		}
		children[ppid] = append(children[ppid], pid)
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// statOf reads the parent pid and state letter of pid from /proc/PID/stat.
func statOf(pid int) (ppid int, state string, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, "", false
	}
	// The command name is in parentheses and may contain spaces: parse after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, "", false
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 2 {
		return 0, "", false
	}
	ppid, err = strconv.Atoi(fields[1])
	if err != nil {
		return 0, "", false
	}
	return ppid, fields[0], true
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	_, state, ok := statOf(pid)
	return ok && state != "Z"
}

// TagEnv is the environment variable that marks every process started by
// this package with a value unique to that start, so its whole tree can be
// found even after a descendant has left the process group and its parent
// has died.
const TagEnv = "SWEEP_PROCESS_TAG"

// NewTag returns a tag unique to one start of a process called name.
func NewTag(name string) string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	return name + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
}

// tagged returns the live pids whose environment holds TagEnv=tag.
func tagged(tag string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte(TagEnv + "=" + tag + "\x00")
	self := os.Getpid()
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(append(env, 0), want) {
			continue
		}
		if alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// KillTagged stops every live process carrying tag (TagEnv), such as the
// tree of an engine whose sweep process was killed: SIGTERM, up to grace
// for them to exit, then SIGKILL (and up to a second for it to land). It
// returns the pids it found.
func KillTagged(tag string, grace time.Duration) []int {
	// A scan can miss a process: one in the middle of an exec has no
	// readable environment for an instant, and a tree may still be forking.
	// Each later scan signals what it finds for the first time.
	var pids []int
	seen := map[int]bool{}
	term := func() int {
		live := tagged(tag)
		for _, pid := range live {
			if !seen[pid] {
				seen[pid] = true
				pids = append(pids, pid)
				_ = syscall.Kill(pid, syscall.SIGTERM)
			}
		}
		return len(live)
	}
	term()
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if term() == 0 {
			return pids
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, pid := range tagged(tag) {
		if !seen[pid] {
			pids = append(pids, pid)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	// SIGKILL is delivered asynchronously: wait a moment for the kills to
	// land, so the caller does not start beside processes still dying.
	for end := time.Now().Add(time.Second); time.Now().Before(end) && len(tagged(tag)) > 0; {
		time.Sleep(10 * time.Millisecond)
	}
	return pids
}
