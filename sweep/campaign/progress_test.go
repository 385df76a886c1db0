package campaign_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runLine is what a progress line says of a run, from "run K, point"
// to before its server word: the run's number, point, arm, concurrency
// and the label of a probe or its full-length run.
var runLine = regexp.MustCompile(`(run \d+, point .*?)  server `)

// runLines are the run lines of progress (runLine), the ETA part of
// each, its numbers as N, and why the search ran it (after "  why: ").
func runLines(progress string) (runs, etas, whys []string) {
	num := regexp.MustCompile(`\d+s`)
	for line := range strings.Lines(progress) {
		m := runLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		runs = append(runs, m[1])
		_, eta, _ := strings.Cut(line, "  server ")
		_, eta, _ = strings.Cut(eta, "  ")
		eta, why, _ := strings.Cut(eta, "  why: ")
		etas = append(etas, num.ReplaceAllString(strings.TrimSpace(eta), "Ns"))
		whys = append(whys, strings.TrimSpace(why))
	}
	return runs, etas, whys
}

// TestAdaptiveResumeProgress: a resumed adaptive sweep, interrupted
// during the full-length run after a probe, printed that run's redo
// without "(full length after its probe)", numbered its runs from 1
// again, and reckoned its elapsed time and ETA from this invocation's
// runs alone (a single full-length run: an ETA many times the rest). The
// resume numbers and labels every run as the uninterrupted sweep does,
// says its elapsed time is this invocation's and the sweep's, and takes
// the ETA's rate from every invocation's runs.
func TestAdaptiveResumeProgress(t *testing.T) {
	setup := func(t *testing.T) (*sweepRun, string, *strings.Builder) {
		s, c64 := probeSweep(t)
		s.b.saturateAt, s.b.kvFullAt, s.b.unsteadyHigh = 16, 64, 2
		s.adaptive()
		var progress strings.Builder
		s.o.Progress = &progress
		return s, c64, &progress
	}
	whole, _, wholeProgress := setup(t)
	_, err := whole.run(t.Context())
	require.NoError(t, err)
	want, _, wantWhy := runLines(wholeProgress.String())
	require.Contains(t, want, "run 5, point 7/9  arm 1/1 "+whole.sched.Arms[0].Name+"  conc 64 (full length after its probe)", "the uninterrupted sweep's run after the probe")

	s, c64, progress := setup(t)
	ctx, cancel := context.WithCancel(t.Context())
	s.b.cancel = cancel
	s.b.faults[c64] = "cancel-full-run"
	_, err = s.run(ctx)
	require.ErrorIs(t, err, context.Canceled)
	before, _, beforeWhy := runLines(progress.String())
	require.NotEmpty(t, before)
	progress.Reset()
	_, err = s.run(t.Context())
	require.NoError(t, err)
	after, etas, afterWhy := runLines(progress.String())
	// The interrupted run is redone: the resume's first run is its.
	assert.Equal(t, want, append(before[:len(before)-1], after...), "runs interrupted and resumed, as the uninterrupted sweep's")
	// Each says why the search ran it, as the uninterrupted sweep's did.
	assert.Equal(t, wantWhy, append(beforeWhy[:len(beforeWhy)-1], afterWhy...), "why of each run, interrupted and resumed")
	assert.NotContains(t, wantWhy, "", "a run the search asked for without saying why")
	assert.Contains(t, wantWhy, "c64 again at full length: its probe's KV pool came near full (unsteady: short of a full point's steady state), with the verdict hanging on it (unsaturated (100.0 % likely) as read, knee c16 (ok) at half its reading)")
	for _, eta := range etas {
		assert.Equal(t, "elapsed Ns in this invocation, Ns in all, ETA Ns", eta)
	}
}
