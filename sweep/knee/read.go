package knee

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"sweep/metrics/result"
)

// ErrMixedSimulation is returned (wrapped) when one arm has both
// simulated and real results: their throughputs are not comparable.
var ErrMixedSimulation = errors.New("simulated and real results in one arm")

// Read reads every aggregate result under dir (result.ReadDir: every
// *.json whose top-level value is an object with "conc" and
// "request_metrics", recursively; other JSON, temp files and logs are
// ignored), groups the files into arms by result.IdentityKeys and returns
// the arms sorted by their identity. Failed points stay in the arm with
// Excluded set, and so do the probes a full-length result of their arm
// and concurrency supersedes (Sample.Superseded) and the results of
// another benchmark duration than the arm's reading at their
// concurrency, or made with another client, trace set, aiperf version or
// image than most of the arm's (Sample.OtherMeasurement; OneMeasurement). A result file whose
// fields have the wrong types, or an arm that mixes simulated and real
// results, is an error (all such problems are joined).
func Read(ctx context.Context, dir string) ([]*Arm, error) {
	return read(ctx, dir, true, nil)
}

// ReadMixed is Read without the refusal of arms that mix simulated and
// real results: each Sample says whether it was simulated and Arm.Simulated
// is true when any was. sweep compare reads with it and names such a mix as
// a problem instead of failing. configured, when not nil, gives the
// benchmark duration of a result whose aiperf artifacts do not say it
// (result.File.BenchmarkSeconds 0; configured's 0: not known either, with
// why in Sample.DurationUnknown; its error is one of the joined
// problems), so OneMeasurement and the lengths read it: sweep compare
// passes run.ConfiguredDuration, the point's run.json.
func ReadMixed(ctx context.Context, dir string, configured func(resultFile string) (seconds float64, unknown string, err error)) ([]*Arm, error) {
	return read(ctx, dir, false, configured)
}

func read(ctx context.Context, dir string, refuseMix bool, configured func(string) (float64, string, error)) ([]*Arm, error) {
	files, problems, err := result.ReadDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	unknown := map[string]string{}
	for _, f := range files {
		if f.BenchmarkSeconds > 0 || configured == nil {
			continue
		}
		d, why, err := configured(f.Path)
		if err != nil {
			problems = append(problems, err)
		}
		f.BenchmarkSeconds, unknown[f.Path] = d, why
	}
	arms := map[string]*Arm{}
	for _, f := range files {
		k := f.Identity.ArmKey()
		a := arms[k]
		if a == nil {
			a = &Arm{Identity: f.Identity}
			arms[k] = a
		}
		s := SampleOf(f)
		s.DurationUnknown = unknown[f.Path]
		a.Samples = append(a.Samples, s)
	}
	out := make([]*Arm, 0, len(arms))
	for _, a := range arms {
		sort.Slice(a.Samples, func(i, j int) bool {
			if a.Samples[i].Conc != a.Samples[j].Conc {
				return a.Samples[i].Conc < a.Samples[j].Conc
			}
			return a.Samples[i].File < a.Samples[j].File
		})
		a.Samples = OneMeasurement(a.Samples)
		a.Simulated = a.Samples[0].Simulated
		for _, s := range a.Samples[1:] {
			if !refuseMix {
				a.Simulated = a.Simulated || s.Simulated
				continue
			}
			if s.Simulated != a.Simulated {
				sim, real := a.Samples[0].File, s.File
				if s.Simulated {
					sim, real = real, sim
				}
				problems = append(problems, fmt.Errorf("arm %s: %w: %s is simulated, %s is real; read them as separate directories",
					a.Identity.Label(), ErrMixedSimulation, sim, real))
				break
			}
		}
		out = append(out, a)
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	sortArms(out)
	return out, nil
}

// sortArms orders arms by config key, then numerically by tp, ep, pp and
// the remaining fields as text.
func sortArms(arms []*Arm) {
	num := func(a *Arm, k string) int {
		n, _ := strconv.Atoi(a.Identity.Get(k))
		return n
	}
	sort.SliceStable(arms, func(i, j int) bool {
		a, b := arms[i], arms[j]
		if ka, kb := a.Identity.GroupKey(), b.Identity.GroupKey(); ka != kb {
			return ka < kb
		}
		for _, k := range []string{"tp", "ep", "pp"} {
			if x, y := num(a, k), num(b, k); x != y {
				return x < y
			}
		}
		return a.Identity.ArmKey() < b.Identity.ArmKey()
	})
}

// ReadFile reads one aggregate result file as a Sample; ok is false when
// the file is not a result (result.ErrNotResult).
func ReadFile(path string) (s Sample, ok bool, err error) {
	f, err := result.ReadFile(path)
	switch {
	case errors.Is(err, result.ErrNotResult):
		return Sample{}, false, nil
	case err != nil:
		return Sample{}, false, err
	}
	return SampleOf(f), true, nil
}
