package executor

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"sweep/internal/plural"
	"sweep/sweep/campaign"
	"sweep/sweep/executor/local"
	"sweep/sweep/run"
)

// NodeGPUs are the GPUs executor ex places the arms on: given (sorted;
// an id listed twice is an error), else 0..7 for a simulation, a dry run
// or the Slurm executor, else the GPUs rocm-smi or nvidia-smi lists.
// Only the local executor asks this host: a Slurm arm's GPUs are its
// job's (--gres), on a node the submitting host need not see; its eight
// price the schedule and its first ETA, as in the dry run. Its errors
// are the caller's usage errors (they name --gpus).
func NodeGPUs(ex Name, given []int, simulateOrDryRun bool) ([]int, error) {
	if len(given) > 0 {
		ids := slices.Clone(given)
		slices.Sort(ids)
		if len(slices.Compact(ids)) != len(given) {
			return nil, fmt.Errorf("--gpus %v: a GPU is listed twice", given)
		}
		return ids, nil
	}
	if simulateOrDryRun || ex == Slurm {
		return []int{0, 1, 2, 3, 4, 5, 6, 7}, nil
	}
	mem, checked, err := run.SystemGPUProbe(context.Background())
	if err != nil || !checked || len(mem) == 0 {
		why := "they list no GPU"
		switch {
		case err != nil:
			why = err.Error()
		case !checked:
			why = "neither is installed"
		}
		return nil, fmt.Errorf("cannot list this node's GPUs (rocm-smi, nvidia-smi: %s); give them with --gpus 0,1,2,3 (or --simulate to run on the simulated engine)", why)
	}
	ids := make([]int, len(mem))
	for i := range ids {
		ids[i] = i
	}
	return ids, nil
}

// WriteDryRun prints the schedule and its cost, ours and InferenceX's,
// the arms placed on the node's GPUs as the local executor places them
// (at most maxParallel at once, 0: as many as fit); simulate adds the
// wall time of the simulated load at the time scale (0: the virtual
// clock, which no time scale compresses). left, when the
// sweep directory holds the sweep (Left.Resume, campaign.Preview), says
// how far it got: each point it does not run again is marked with how it
// ended (Left.Ended: ok, skipped, failed), and what is left is priced too.
func WriteDryRun(w io.Writer, s *campaign.Schedule, c *campaign.Cost, gpus []int, maxParallel int, simulate bool, scale float64, left campaign.Left) error {
	node := &local.Executor{GPUs: gpus, MaxParallel: maxParallel}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "arm\tGPUs\tconcs\tserver starts\twhy")
	for _, a := range s.Arms {
		concs := make([]string, len(a.Points))
		for j, p := range a.Points {
			concs[j] = strconv.Itoa(p.Conc())
		}
		fmt.Fprintf(tw, "%d %s\t%s\t%s\t%d\t%s\n", a.Index+1, a.Name, armGPUs(a), strings.Join(concs, " "), a.Servers, a.Why)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\norder:")
	// A point a resume does not run again says how it ended
	// (Left.Ended): ok, skipped, failed with no retry left.
	width := len("start server")
	for _, how := range left.Ended {
		width = max(width, len(how))
	}
	var prev *campaign.Point // the last point to run
	for _, p := range s.Points {
		what := left.Ended[p.ID]
		if !left.Resume || slices.Contains(left.Run, p.ID) {
			what = "reuse"
			if prev == nil || prev.Arm != p.Arm || prev.Server != p.Server {
				what = "start server"
			}
			prev = p
		}
		fmt.Fprintf(w, "  %3d  arm %d  conc %-4d %-*s %s\n", p.Index+1, p.Arm+1, p.Conc(), width, what, p.ID)
	}
	src := func(measured bool) string {
		if measured {
			return "measured"
		}
		return "planned"
	}
	on := onGPUs(s, len(node.GPUs))
	ours, theirs := c.Estimate(s, node.Wall)
	fmt.Fprintf(w, "\ncost (server start %.0f s %s; point = duration + 60 s, %s):\n", c.StartSeconds, src(c.MeasuredStart), src(c.MeasuredPoint))
	fmt.Fprintf(w, "  this schedule:   %s, %.1f GPU-hours, wall %s on %s\n",
		plural.Count(ours.ServerStarts, "server start", "server starts"), ours.GPUHours, fmtHours(ours.WallSeconds), on)
	fmt.Fprintf(w, "  InferenceX's:    %s (one job and one model load per point), %.1f GPU-hours, wall %s on %s\n",
		plural.Count(theirs.ServerStarts, "server start", "server starts"), theirs.GPUHours, fmtHours(theirs.WallSeconds), on)
	if theirs.GPUHours > 0 {
		fmt.Fprintf(w, "  saving:          %.1f GPU-hours (%.0f %%)\n", theirs.GPUHours-ours.GPUHours, 100*(theirs.GPUHours-ours.GPUHours)/theirs.GPUHours)
	}
	load := s.Points
	if left.Resume {
		load = nil
		for _, p := range s.Points {
			if slices.Contains(left.Run, p.ID) {
				load = append(load, p)
			}
		}
		fmt.Fprintf(w, "  left to run:     %s\n", leftLine(left))
	}
	switch {
	case simulate && len(load) > 0 && scale == 0:
		fmt.Fprintf(w, "  simulated here:  on the virtual clock, each point in seconds (its events set the time, not its length)\n")
	case simulate && len(load) > 0:
		fmt.Fprintf(w, "  simulated here:  about %s of load at time scale %g\n", fmtHours(c.SimulatedSeconds(&campaign.Schedule{Points: load}, scale)), scale)
	}
	return nil
}

// armGPUs is the GPUs an arm's server uses, for the dry run's table:
// "8", or on a multi-node arm every worker's node, "16 (2 nodes x 8)"
// (GPU-hours are priced on them all: Cost.Estimate).
func armGPUs(a *campaign.Arm) string {
	if a.Nodes <= 1 {
		return strconv.Itoa(a.GPUs)
	}
	return fmt.Sprintf("%d (%d nodes x %d)", a.GPUs*a.Nodes, a.Nodes, a.GPUs)
}

// onGPUs is what the schedule's wall time runs on, the node's n GPUs:
// "8 GPUs", or with multi-node arms, whose deployments each take as many
// nodes as they have workers, "2 nodes of 8 GPUs".
func onGPUs(s *campaign.Schedule, n int) string {
	nodes := 1
	for _, a := range s.Arms {
		nodes = max(nodes, a.Nodes)
	}
	if nodes == 1 {
		return plural.Count(n, "GPU", "GPUs")
	}
	return fmt.Sprintf("%d nodes of %s", nodes, plural.Count(n, "GPU", "GPUs"))
}

// leftLine is what a resume has left to run, for the dry run: "2 points
// and 1 server start, 4.1 GPU-hours", or "nothing: a run ends at once".
func leftLine(l campaign.Left) string {
	if l.Points == 0 {
		return "nothing: a run of this command ends at once, with the directory's summary"
	}
	return fmt.Sprintf("%s and %s, %.1f GPU-hours", plural.Count(l.Points, "point", "points"),
		plural.Count(l.ServerStarts, "server start", "server starts"), l.GPUHours)
}

// fmtHours is "1h05m" or "42s".
func fmtHours(sec float64) string {
	d := time.Duration(sec * float64(time.Second)).Round(time.Second)
	if d < time.Hour {
		return d.String()
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
