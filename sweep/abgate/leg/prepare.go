package leg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/internal/usage"
	"sweep/recipes"
	"sweep/sweep/abgate"
	"sweep/sweep/run"
)

// DefaultTimeScale is a simulated leg's time scale: a leg's verdict
// counts the answers BFCL grades, not latencies, so its simulated
// engines run on a wall clock compressed more than a benchmark point's
// (run.DefaultTimeScale), as long as the host keeps up with the answers.
const DefaultTimeScale = 150

// Request is a leg to run as `sweep ab run` and `sweep ab calibrate` ask
// for it. Errors about what it asks for are *usage.Error.
type Request struct {
	// Leg is a shipped leg's name or a leg file (LoadLeg).
	Leg string
	// Categories, when set, replace the leg's.
	Categories []string
	// Out is the output directory (default
	// ./ab-runs/<leg><Suffix>-<UTC time>; made absolute).
	Out    string
	Suffix string
	// Resume accepts an Out that holds an earlier Run of the same leg
	// made the same way (LegFile, CheckResume): sweep ab run resumes it.
	Resume bool
	// Mode holds the simulation (Simulate, TimeScale: DefaultTimeScale
	// unless given); a leg's simulated engine runs on the compressed wall
	// clock and its client is bfcl.
	run.Mode
	// BFCL is the bfcl program of real runs.
	BFCL string
	// Port is each arm's public port, one after the other (0: the
	// default port, or a free one per arm when simulating, from FreePort).
	Port     int
	FreePort func() (int, error)
	// RunTimeout bounds each bfcl generate (0: the leg's timeouts.run).
	RunTimeout time.Duration
	// Server tunes the servers; StopGraceSet is Server.StopGrace given.
	Server       run.Options
	StopGraceSet bool
	// Generator loads the configs.
	Generator func() (*matrix.Generator, error)
	// Stderr gets the leg's warnings and progress.
	Stderr io.Writer
}

// Prepared is a leg planned and ready to run (Run, Calibrate).
type Prepared struct {
	Leg     *configs.ABLeg
	Plan    *Plan
	Options Options
	Out     string
	Started time.Time
	// Mode describes the engines and bfcl for a header line.
	Mode string
}

// LoadLeg reads a leg by file path (a .yaml or .yml name, or one holding
// a path separator) or shipped name.
func LoadLeg(arg string) (*configs.ABLeg, error) {
	if strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") || strings.ContainsRune(arg, os.PathSeparator) {
		return configs.LoadABLeg(arg)
	}
	return configs.DefaultABLeg(arg)
}

// Prepare loads and plans the leg, prints its warnings and makes the
// leg runner's options.
func Prepare(r *Request) (*Prepared, error) {
	started := time.Now()
	l, err := LoadLeg(r.Leg)
	if err != nil {
		return nil, &usage.Error{Err: err}
	}
	if len(r.Categories) > 0 {
		l.Categories, l.CategoriesPos = r.Categories, make([]configs.Pos, len(r.Categories))
		for i := range r.Categories {
			l.CategoriesPos[i] = configs.Pos{File: "--categories", Line: 1, Col: i + 1}
		}
	}
	g, err := r.Generator()
	if err != nil {
		return nil, err
	}
	out := r.Out
	if out == "" {
		out = filepath.Join("ab-runs", l.Name+r.Suffix+"-"+started.UTC().Format("20060102T150405Z"))
	}
	if out, err = filepath.Abs(out); err != nil {
		return nil, err
	}
	port := func() (int, error) {
		if r.Port != 0 {
			return r.Port, nil
		}
		if r.Simulate {
			return r.FreePort()
		}
		return recipes.DefaultPort, nil
	}
	p, err := NewPlan(l, PlanOptions{Generator: g, Port: port, Dir: out, Simulate: r.Simulate})
	if err != nil {
		return nil, &usage.Error{Err: err}
	}
	for _, w := range p.Warnings {
		fmt.Fprintf(r.Stderr, "warning: %s\n", w)
	}
	if err := checkOut(out, r.Resume, p, r.Simulate); err != nil {
		return nil, err
	}
	r.SimClock, r.Builtin = run.ClockWall, true
	setup, err := r.Setup(recipes.DefaultAiperfVersion, false)
	if err != nil {
		return nil, err
	}
	so := r.PointOptions(r.Server, r.StopGraceSet)
	progress := func(line string) {
		fmt.Fprintf(r.Stderr, "[%6s] %s\n", time.Since(started).Round(time.Second), line)
	}
	so.Progress = progress
	mode := "real engines, " + r.BFCL
	if r.Simulate {
		mode = fmt.Sprintf("simulated engines and bfcl, time scale %gx", r.TimeScale)
	}
	lo := Options{Dir: out, Setup: setup, Server: so, RunTimeout: r.RunTimeout, Progress: progress}
	if !r.Simulate {
		lo.BFCL = []string{r.BFCL}
	}
	if r.Server.StopGrace > 0 {
		lo.StopGrace = min(r.Server.StopGrace, 30*time.Second)
	}
	return &Prepared{Leg: l, Plan: p, Options: lo, Out: out, Started: started, Mode: mode}, nil
}

// Err is an error of Run or Calibrate as the command cmd reports it: an
// interrupt wraps context.Canceled, a used output directory is a usage
// error naming --out.
func (p *Prepared) Err(ctx context.Context, cmd string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %v: %w", cmd, err, context.Canceled)
	}
	if errors.Is(err, abgate.ErrRootNotEmpty) {
		return usage.Refusef("--out %s: %w", p.Out, err)
	}
	return err
}

// checkOut refuses, before anything starts, an output directory (--out)
// that a leg cannot have to itself: a file, a path under a file, or a
// directory that holds something (an earlier leg's roots and report; its
// lock alone is nothing) but, resume set, an earlier Run of p's leg made as it is made now
// (simulated or not; CheckResume). One that does not exist yet is made by
// Run.
func checkOut(out string, resume bool, p *Plan, simulated bool) error {
	st, err := os.Stat(out)
	switch {
	case errors.Is(err, syscall.ENOTDIR):
		return usage.Refusef("--out %s: a parent of it is a file, not a directory: give a directory that does not exist yet or is empty", out)
	case err != nil:
		return nil // missing (Run makes it) or unreadable (making it says why)
	case !st.IsDir():
		return usage.Refusef("--out %s: it is a file, not a directory: give a directory that does not exist yet or is empty", out)
	}
	entries, err := os.ReadDir(out)
	if entries = withoutLock(entries); err != nil || len(entries) == 0 {
		return nil
	}
	if _, err := os.Lstat(filepath.Join(out, LegFile)); resume && err == nil {
		return CheckResume(out, p, simulated)
	}
	resumes := ""
	if resume {
		resumes = " (only the directory of an earlier sweep ab run, with its " + LegFile + ", is resumed)"
	}
	return usage.Refusef("--out %s: not empty (holds %s): each leg or A/A calibration writes its servers, BFCL roots and report into a new or empty directory%s: give another --out, or drop --out for the default ./ab-runs/<LEG>-<UTC time>", out, holds(entries), resumes)
}
