package run

import (
	"regexp"
	"slices"
	"strings"
)

// A log tail's lines are read for why a process failed in three tiers,
// the first that finds a line winning (Stage.Cause):
//
//  1. the first Python exception line ("torch.OutOfMemoryError: CUDA out
//     of memory ...", also after a log prefix): in a chained traceback
//     the first is the root cause, and an engine's later lines report
//     its death ("EngineDeadError: ... See stack trace (above)",
//     "Received sigquit from a child process");
//  2. the last line with a word that names a failure (causeWords, a
//     disk's lack of space among them: noSpaceWords);
//  3. the last line that says something failed, but for a count of none
//     ("(0 failed)": a progress line).
//
// Words inside paths count for none: a directory named for a failure is
// no cause. A tail with no such line has no cause: its last line (a
// progress line, an access log) says nothing of why.
var (
	exceptionLine = regexp.MustCompile(`\b[A-Za-z_][\w.]*(Error|Exception):`)
	causeWords    = slices.Concat([]string{"error", "exception", "traceback", "fatal", "panic", "abort", "crash", "refused", "denied",
		"killed", "out of memory", "no such", "cannot", "unable", "invalid", "timeout", "timed out", "timing out"}, noSpaceWords)
	noneFailed = regexp.MustCompile(`(^|[^0-9])0 failed`)
)

// noSpaceWords name a write refused for want of space as the C
// library's strerror (which Python's OSError and Go's syscall errors
// quote) and errno's names spell it, in lower case; Stage.Cause picks
// a line with one (causeWords).
var noSpaceWords = []string{"no space left on device", "disk quota exceeded", "enospc", "edquot"}

// maxCause bounds the log line Detail quotes, in bytes.
const maxCause = 400

// Cause is the line of the stage's log tail that says why it failed (the
// tiers above); "" without one, or when Error already holds it.
func (s *Stage) Cause() string {
	line := causeLine(s.LogTail)
	if line == "" || strings.Contains(s.Error, line) {
		return ""
	}
	if len(line) > maxCause {
		line = strings.ToValidUTF8(line[:maxCause], "") + "…"
	}
	return line
}

// causeLine is the line of tail the tiers pick, trimmed; "" for none.
func causeLine(tail []string) string {
	words := make([]string, len(tail)) // each line's words outside paths, lower case
	for i, l := range tail {
		ws := slices.DeleteFunc(strings.Fields(strings.ToLower(l)), func(w string) bool { return strings.Contains(w, "/") })
		words[i] = strings.Join(ws, " ")
	}
	for _, l := range tail {
		if exceptionLine.MatchString(l) {
			return strings.TrimSpace(l)
		}
	}
	for i := len(tail) - 1; i >= 0; i-- {
		if slices.ContainsFunc(causeWords, func(w string) bool { return strings.Contains(words[i], w) }) {
			return strings.TrimSpace(tail[i])
		}
	}
	for i := len(tail) - 1; i >= 0; i-- {
		if strings.Contains(noneFailed.ReplaceAllString(words[i], "$1"), "fail") {
			return strings.TrimSpace(tail[i])
		}
	}
	return ""
}

// Detail is the stage's error and, when the log says more, its Cause:
// "client failed (exit code 1); from its log: sweep: loadgen: warm-up
// request ... failed (Bad Request: ... the prompt needs 98468 tokens but
// the KV cache holds 4096 ...)".
func (s *Stage) Detail() string {
	if c := s.Cause(); c != "" {
		return s.Error + "; from its log: " + c
	}
	return s.Error
}
