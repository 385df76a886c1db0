package executor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"sweep/configs/matrix"
	"sweep/internal/plural"
	"sweep/internal/selfexe"
	"sweep/metrics/result"
	"sweep/sweep/campaign"
	"sweep/sweep/executor/slurm"
	"sweep/sweep/launch"
	"sweep/sweep/run"
)

// Sweep is one run of a sweep command (discover, official) once its
// flags are checked and its points scheduled: it prices the schedule and,
// with DryRun, prints it; else it builds the executor Options.Name names,
// with the sweep's watchdogs, and runs the schedule through campaign.Run.
//
//	sw := executor.Sweep{Options: executor.Options{Name: name, Dir: dir, Schedule: sched, GPUs: gpus, ...}, Command: "discover", ...}
//	err := sw.Run(ctx) // the summary table is printed to sw.Out
type Sweep struct {
	// Options are the executor's; Run fills in Cost, Progress, Program
	// (Slurm), Containers (a local --launch), Nodes (SlurmNodes) and the
	// Point's Progress (Verbose).
	Options
	// Command names the sweep (discover or official) in its header line.
	Command string
	// Settings are the choices that make the sweep what it is
	// (campaign.Identity); a directory started with others is refused.
	Settings []campaign.Setting
	// Simulate and TimeScale price simulated points (their wall time).
	Simulate  bool
	TimeScale float64
	// Duration is the benchmark duration of every point (0: the mode's);
	// CostFrom, for a dry run, an earlier sweep directory whose measured
	// times price the schedule.
	Duration int
	CostFrom string
	// Retries and FailFast as campaign.Options has them.
	Retries  int
	FailFast bool
	// DryRun prints the schedule and its cost and runs nothing;
	// ProbeDuration is the adaptive search's probe length it names.
	DryRun        bool
	ProbeDuration int
	// NewLaunch, when set, says how each arm runs in its image (--launch);
	// it is called once, after the schedule is priced.
	NewLaunch func() (Launch, error)
	// SlurmNodes runs each simulated multi-node deployment on a Slurm
	// allocation of its own (slurm.ArmNodes).
	SlurmNodes bool
	// Verbose prints every stage of every point.
	Verbose bool
	// Out takes the dry run and the summary; Log the header, warnings and
	// progress lines (written from several goroutines, one at a time).
	Out, Log io.Writer
}

// CheckMultiNode refuses what a sweep of disaggregated multi-node arms
// cannot do yet: run them unsimulated (they run as one Slurm job over
// several nodes: sweep run --launch; a dry run is refused as the run
// is), in the image (launched, --launch) or as Slurm jobs of the Slurm
// executor; and SlurmNodes without them.
// Its errors are the caller's usage errors.
func (s Sweep) CheckMultiNode(rows matrix.Matrix, launched bool) error {
	if !rows.HasAgenticMultiNode() {
		if s.SlurmNodes {
			return errors.New("--slurm runs multi-node arms only (the selection has none; single-node arms run on Slurm with --executor slurm)")
		}
		return nil
	}
	switch {
	case s.SlurmNodes && !s.Simulate:
		return errors.New("--slurm runs simulated multi-node arms (add --simulate)")
	case !s.Simulate:
		return fmt.Errorf("the selection holds multi-node arms: their points run as one Slurm job over several nodes (sweep run --launch --config-key KEY ...); %s runs them only with --simulate", s.Command)
	case launched:
		return fmt.Errorf("--launch: multi-node arms are launched with sweep run --launch, not by %s", s.Command)
	case s.Name == Slurm:
		return errors.New("--executor slurm: multi-node arms run with --executor local, simulated on this host's loopback, or with --executor local --slurm, each deployment as job steps on a Slurm allocation of its own")
	}
	return nil
}

// Run prices the schedule and prints it (DryRun) or runs it. A
// *ProfileError and a *campaign.DifferenceError are the caller's usage
// errors; a failed sweep's error says to rerun the command when ctx was
// cancelled (it then wraps context.Canceled).
func (s Sweep) Run(ctx context.Context) error {
	started := time.Now()
	progress := &lockedWriter{w: s.Log}
	s.Cost = s.costModel()
	if s.DryRun {
		return s.dryRun(progress)
	}
	if _, err := s.calibrationLines(); err != nil {
		return err // before any engine starts
	}
	var l Launch
	if s.NewLaunch != nil {
		var err error
		if l, err = s.NewLaunch(); err != nil {
			return err
		}
		l.Progress = progress
		if l.Client != nil {
			// run-arm makes the venv and names its aiperf per job.
			s.Setup.Aiperf, s.Setup.ClientWhy = "aiperf", "--launch --inferencex: InferenceX's aiperf in each arm's per-job venv"
		}
		if err := l.Preflight(ctx, s.Schedule, launch.Dialer{}); err != nil {
			return err
		}
	}
	if s.Verbose {
		s.Point.Progress = func(line string) {
			fmt.Fprintf(s.Log, "[%7s]     %s\n", time.Since(started).Round(time.Second), line)
		}
	}
	if err := s.wire(l, progress); err != nil {
		return err
	}
	ex, err := New(s.Options)
	if err != nil {
		return err
	}
	o := s.campaignOptions(ex)
	o.Progress, o.Parallel, o.Estimate, o.Work, o.Begin = progress, s.Schedule.Parallel(len(s.GPUs)), s.etaWall, s.pointWork, s.header
	sum, runErr := campaign.Run(ctx, o)
	if sum != nil {
		fmt.Fprintf(s.Out, "\n%s", sum.Table())
		if len(sum.Written) > 0 {
			fmt.Fprintf(s.Out, "summary: %s\n", strings.Join(sum.Written, "\n         "))
		} else {
			fmt.Fprintf(s.Out, "summary: not written (the error below says why; the table above is all of it)\n")
		}
	}
	if runErr != nil && ctx.Err() != nil && !errors.As(runErr, new(*campaign.DifferenceError)) {
		return fmt.Errorf("%v (rerun the same command to resume): %w", runErr, context.Canceled)
	}
	return runErr
}

// campaignOptions are the campaign's options of the sweep run with ex:
// what makes it the sweep it is and how its points are chosen and
// priced, for Run and Preview alike.
func (s Sweep) campaignOptions(ex campaign.Executor) campaign.Options {
	return campaign.Options{Dir: s.Dir, Schedule: s.Schedule, Executor: ex, Retries: s.Retries, FailFast: s.FailFast,
		Identity: campaign.Identity{Command: s.Command, Settings: s.Settings}, Choose: s.Choose(), Cost: s.Cost}
}

// header prints the sweep's first lines once campaign.Run has read its
// directory: the schedule, what is left to run of it and the server
// starts that needs ("2 points in 1 arm, 1 server start planned"; a
// resume: "1 left to run, 1 server start planned" or "nothing left to
// run, 0 server starts planned"), where it runs, its client and its
// calibration.
func (s Sweep) header(l campaign.Left) {
	planned := plural.Count(l.ServerStarts, "server start", "server starts") + " planned"
	switch {
	case l.Resume && l.Points == 0:
		planned = "nothing left to run, " + planned
	case l.Resume:
		planned = fmt.Sprintf("%d left to run, %s", l.Points, planned)
	}
	fmt.Fprintf(s.Log, "sweep %s: %s in %s, %s; %s; client: %s (%s); directory %s\n",
		s.Command, plural.Count(len(s.Schedule.Points), "point", "points"), plural.Count(len(s.Schedule.Arms), "arm", "arms"),
		planned, s.Where(), s.Setup.ClientInfo().Name, s.Setup.ClientWhy, s.Dir)
	lines, _ := s.calibrationLines() // Run refused a file that calibrates nothing
	for _, line := range lines {
		fmt.Fprintf(s.Log, "  %s\n", line)
	}
}

// wire fills in the executor's options Run owns: its progress lines, how
// a Slurm job starts sweep, a launched arm's program or container, and
// the nodes of a multi-node deployment.
func (s *Sweep) wire(l Launch, progress io.Writer) error {
	s.Progress = func(line string) { fmt.Fprintln(progress, "  "+line) }
	launched := s.NewLaunch != nil
	if s.Name == Slurm {
		exe, err := selfexe.Path()
		if err != nil {
			return err
		}
		s.Program = []string{exe}
		if launched {
			if s.ArmProgram, err = l.ArmProgram(s.Schedule); err != nil {
				return err
			}
		}
	} else if launched {
		var err error
		if s.Containers, err = l.ContainerArms(s.Schedule, max(s.Point.StopGrace, 0)+20*time.Second); err != nil {
			return err
		}
	}
	if s.SlurmNodes {
		s.Nodes = &slurm.ArmNodes{Client: slurm.NewClient(slurm.Exec{}), Dir: s.Dir, Progress: progress, StartTimeout: s.StartTimeout,
			Wall: func(a *campaign.Arm) time.Duration {
				var d time.Duration
				for _, p := range a.Points {
					d += s.pointWall(p)
				}
				return d
			}}
	}
	return nil
}

// dryRun prints what a run of the sweep would do in its directory
// (campaign.Preview: refused when it holds a different sweep, else how
// far the directory's sweep got), the schedule, its cost and, with a
// launch, each arm's launch.
func (s Sweep) dryRun(progress io.Writer) error {
	left, err := campaign.Preview(s.campaignOptions(nil))
	if err != nil {
		return err
	}
	if left.Resume {
		fmt.Fprintf(s.Out, "resume: %s holds this sweep, which a run goes on with: %s\n", s.Dir, left.Status)
		for _, line := range left.Fixed {
			fmt.Fprintf(s.Out, "  %s\n", line)
		}
	}
	if s.Adaptive {
		points := "at the full length"
		probing, full := armsProbing(s.Schedule)
		switch {
		case s.ProbeDuration <= 0:
		case full == 0:
			points = fmt.Sprintf("as %d s probes, run again at the full length where the verdict hangs on them", s.ProbeDuration)
		case probing == 0:
			points = "at the full length: multi-node arms run no probes"
		default:
			points = fmt.Sprintf("as %d s probes, run again at the full length where the verdict hangs on them; multi-node arms run no probes, their points at the full length", s.ProbeDuration)
		}
		fmt.Fprintf(s.Out, "adaptive: each arm runs only the points knee.Next asks for as results come in (x4 bracketing %s, then the knee's neighbours that can still move it; README: sweep discover --adaptive); the cost below is the full grid's, an upper bound: the summary gives the GPU-hours the search spent when it ends\n", points)
	}
	scale := s.TimeScale
	if s.virtualClock() {
		scale = 0
	}
	if err := WriteDryRun(s.Out, s.Schedule, s.Cost, s.GPUs, s.MaxParallel, s.Simulate, scale, left); err != nil {
		return err
	}
	lines, err := s.calibrationLines()
	if err != nil {
		return err
	}
	if len(lines) > 0 {
		fmt.Fprintf(s.Out, "\nsimulated engines' calibration (%s):\n", cmp.Or(s.Setup.SimCalibrationFrom, run.FlagSimCalibration))
		for _, line := range lines {
			fmt.Fprintf(s.Out, "  %s\n", line)
		}
	}
	s.writeJobPorts(s.Out)
	if s.NewLaunch == nil {
		return nil
	}
	l, err := s.NewLaunch()
	if err != nil {
		return err
	}
	l.Progress = progress
	return l.WriteDryRun(s.Out, s.Schedule, s.Name == Slurm)
}

// writeJobPorts names the arms whose servers listen on their Slurm job's
// port (jobPort), which no plan made before the job has its id shows.
func (s Sweep) writeJobPorts(w io.Writer) {
	if s.Name != Slurm {
		return
	}
	jp := jobPort(s.Profile, !s.Setup.Simulate)
	if jp == nil {
		return
	}
	var arms []string
	for _, a := range s.Schedule.Arms {
		if jp(a) != nil {
			arms = append(arms, strconv.Itoa(a.Index+1))
		}
	}
	switch len(arms) {
	case 0:
		return
	case 1:
		fmt.Fprintf(w, "\nports: arm %s's server listens", arms[0])
	default:
		fmt.Fprintf(w, "\nports: the servers of arms %s listen", strings.Join(arms, ", "))
	}
	fmt.Fprintln(w, " on 40000 + the job id % 10000, as the launcher puts them (its jobs share nodes), not on the planned port: each job is submitted held and its points planned on that port once it has its id")
}

// armsProbing counts the arms whose points an adaptive search can run as
// short probes and the multi-node arms, which it runs at the full length
// only (campaign.Plan plans no probe for them).
func armsProbing(s *campaign.Schedule) (probing, full int) {
	for _, a := range s.Arms {
		if len(a.Points) > 0 && a.Points[0].Plan.MultiNode != nil {
			full++
		} else {
			probing++
		}
	}
	return probing, full
}

// costModel returns the per-point and per-start times: measured ones from
// CostFrom when given (a warning and the plan's when it cannot be read),
// else the plan's.
func (s Sweep) costModel() *campaign.Cost {
	if s.CostFrom == "" {
		return campaign.PlannedCost(s.Duration)
	}
	c, err := campaign.MeasuredCost(s.CostFrom, s.Duration)
	if err != nil {
		fmt.Fprintf(s.Log, "warning: --cost-from %s: %v; using the planned times\n", s.CostFrom, err)
	}
	return c
}

// etaWall is a point's predicted wall time for the first ETA, before a
// point has ended: none on the virtual clock, where a point's events, not
// its length, set its time here (a 1200 s point took 3 s where the time
// scale predicted 11 s), so the ETA waits for the points done.
func (s Sweep) etaWall(p *campaign.Point) time.Duration {
	if s.virtualClock() {
		return 0
	}
	return s.pointWall(p)
}

// pointWork is a point's share of the sweep's time here
// (campaign.Options.Work): its predicted wall time, or on the virtual
// clock, which no length predicts, its simulated work
// (Cost.VirtualWork).
func (s Sweep) pointWork(p *campaign.Point) float64 {
	if s.virtualClock() {
		return s.Cost.VirtualWork(p)
	}
	return s.pointWall(p).Seconds()
}

// virtualClock says the points run on the simulated engine's virtual
// clock, which no time scale compresses.
func (s Sweep) virtualClock() bool { return s.Simulate && !s.Setup.WallClock }

// pointWall is a point's predicted wall time.
func (s Sweep) pointWall(p *campaign.Point) time.Duration {
	return s.Cost.PointWall(p, s.Simulate, s.TimeScale)
}

// lockedWriter serialises writes from several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// calibrationLines say, arm by arm, what the simulated engines'
// calibration file (Setup.SimCalibration; none: no line) sets for the
// arm's engines, read as they read it at the point the arm's server is
// planned for (campaign.Arm.ServerPoint: a shared server's; each result
// records it for its own point). A file that calibrates none of the
// sweep's engines is refused (run.Setup.CheckCalibrationReach).
func (s Sweep) calibrationLines() ([]string, error) {
	if !s.Setup.Simulate || s.Setup.SimCalibration == "" {
		return nil, nil
	}
	var lines, names []string
	var cals []*result.SimCalibration
	for _, arm := range s.Schedule.Arms {
		p := arm.ServerPoint()
		if p == nil {
			continue
		}
		what := ""
		spec, err := run.FromPlan(&p.Plan, s.Setup)
		switch {
		case err != nil:
			what = fmt.Sprintf("calibration %s not read: %v", s.Setup.SimCalibration, err)
			cals = append(cals, nil) // not known
		case spec.Simulation == nil || spec.Simulation.Calibration == nil:
			continue
		default:
			what = spec.Simulation.Calibration.String()
			cals = append(cals, spec.Simulation.Calibration)
		}
		name := fmt.Sprintf("arm %d %s", arm.Index+1, arm.Name)
		lines, names = append(lines, name+": "+what), append(names, name)
	}
	return lines, s.Setup.CheckCalibrationReach(names, cals)
}
