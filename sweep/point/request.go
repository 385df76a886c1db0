package point

import (
	"fmt"
	"io"
	"time"

	"sweep/configs/matrix"
	"sweep/recipes"
	"sweep/recipes/models"
	"sweep/sweep/run"
)

// Request is one point to run and how. Errors about what it asks for are
// *usage.Error.
type Request struct {
	// Key names the point unless PlanFile is set.
	Key
	// Row is a single-node row picked elsewhere (an arm's row at a
	// concurrency off its conc-list: sweep sim agreement's frontier
	// point), planned instead of Key's.
	Row *matrix.Row
	// PlanFile is a point planned elsewhere (one element of `sweep plan
	// --format json`), run instead of planning by Key.
	PlanFile string
	// Out is the output directory (made absolute).
	Out string
	// Force reuses a non-empty Out.
	Force bool
	// Mode chooses the engine (real or simulated) and the client.
	run.Mode
	// Plan are the planning options (its Port 0: the default port, or a
	// free one when simulating).
	Plan recipes.PlanOptions
	// Point are the runner's options.
	Point run.Options
	// StopGraceSet is Point.StopGrace given (0 then means no grace);
	// SimClockSet is the clock given (a multi-node point defaults to the
	// wall clock).
	StopGraceSet, SimClockSet bool

	// Launch runs the point the way the runner's launcher does: allocate,
	// import the image, run engine and client inside it.
	Launch bool
	// Site changes the runner profile's site facts (key=value).
	Site []string
	// SweepBinary is the sweep mounted into the container (default: this one).
	SweepBinary string
	// JobID is an allocation to run in (default $SLURM_JOB_ID).
	JobID string
	// Inferencex is the host's InferenceX checkout whose utils/aiperf the
	// launched point installs into a per-job venv (launch.ClientSetup).
	Inferencex string
	// SubmitDir is where a multi-node job is submitted from.
	SubmitDir string
	// Slurm runs a simulated multi-node point's roles as job steps on the
	// nodes of a Slurm allocation.
	Slurm bool
	// SlurmStartTimeout bounds how long that allocation may stay pending
	// (0: no bound; slurm.AllocSpec.StartTimeout).
	SlurmStartTimeout time.Duration

	// Generator loads the configs (called when the point is planned by Key).
	Generator func() (*matrix.Generator, error)
	// FreePort finds a free port for a simulated point (and the ports
	// recipes.RouterPorts puts beside it); FreePorts finds n free ports.
	FreePort  func() (int, error)
	FreePorts func(n int) ([]int, error)
	// Stdout gets the summary, Stderr the progress.
	Stdout, Stderr io.Writer
}

// PlanRow plans the point Row is, else the one Key names, writing into
// out; with Plan.Port 0 it takes the default port, or a free one when
// simulating.
func (r *Request) PlanRow(g *matrix.Generator, out string) (*recipes.Point, error) {
	row, err := r.Row, error(nil)
	if row == nil {
		if row, err = r.SelectRow(g); err != nil {
			return nil, err
		}
	}
	if r.Plan.Port == 0 {
		r.Plan.Port = recipes.DefaultPort
		if r.Simulate {
			if r.Plan.Port, err = r.FreePort(); err != nil {
				return nil, err
			}
		}
	}
	r.Plan.ResultDir = out
	r.Plan.Eval = r.Eval
	r.Plan.Runners = g.Runners
	r.Plan = models.WithBuiltin(r.Plan)
	return planOne(row, r.Plan)
}

// progress prints a line on Stderr behind the time since started.
func (r *Request) progress(started time.Time) func(string) {
	return func(line string) {
		fmt.Fprintf(r.Stderr, "[%6s] %s\n", time.Since(started).Round(time.Second), line)
	}
}
