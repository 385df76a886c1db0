package gha

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/sweep/abgate/leg"
)

// ABLeg is one shipped A/B leg the nightly workflow runs.
type ABLeg struct {
	Name     string `json:"name"`
	File     string `json:"file"`
	Model    string `json:"model"`
	Runner   string `json:"runner"`
	Schedule string `json:"schedule"`
	// GPU is the leg's accelerator (mi325x, h100, ...): the workflow
	// prepares ROCm hosts (SMG's gRPC servicer venv) by it.
	GPU string `json:"gpu"`
}

// ABLegSkip is a leg the nightly does not run, and why.
type ABLegSkip struct {
	Name   string `json:"name"`
	Runner string `json:"runner"`
	Reason string `json:"reason"`
	// Model is the leg's model, for the notice.
	Model string `json:"-"`
}

// ABLegMatrix is the A/B workflow's matrix (`sweep ab legs`).
type ABLegMatrix struct {
	Legs    []ABLeg     `json:"legs"`
	Count   int         `json:"count"`
	Skipped []ABLegSkip `json:"skipped"`
}

// ABLegsOptions select the shipped legs of the matrix.
type ABLegsOptions struct {
	// Only keeps these legs (default: every shipped leg).
	Only []string
	// Schedule keeps the legs of one schedule (configs.ABNightly or
	// configs.ABManual); "" or "all" keeps every leg.
	Schedule string
	// Avail says which runners can take jobs.
	Avail Availability
}

// ABLegs plans every selected shipped leg (a leg that does not plan is an
// error, after the others) and lists those whose runner can take them;
// the others are skipped, with why.
func ABLegs(ctx context.Context, g *matrix.Generator, o ABLegsOptions) (*ABLegMatrix, error) {
	tmp, err := os.MkdirTemp("", "sweep-ab-legs-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := &ABLegMatrix{Legs: []ABLeg{}, Skipped: []ABLegSkip{}}
	var errs []error
	for _, name := range configs.ABLegNames() {
		if len(o.Only) > 0 && !slices.Contains(o.Only, name) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		l, err := configs.DefaultABLeg(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, err := leg.NewPlan(l, leg.PlanOptions{Generator: g, Dir: filepath.Join(tmp, name)}); err != nil {
			errs = append(errs, err)
			continue
		}
		if o.Schedule != "all" && o.Schedule != "" && l.Schedule != o.Schedule {
			continue
		}
		if why := o.Avail.Unavailable(l.Runner); why != "" {
			out.Skipped = append(out.Skipped, ABLegSkip{Name: name, Runner: l.Runner, Reason: why, Model: l.Model})
			continue
		}
		out.Legs = append(out.Legs, ABLeg{Name: name, File: l.File, Model: l.Model, Runner: l.Runner, Schedule: l.Schedule, GPU: leg.GPU(l)})
	}
	out.Count = len(out.Legs)
	return out, errors.Join(errs...)
}
