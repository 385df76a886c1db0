package compare

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"

	"sweep/configs"
	"sweep/internal/stats"
	"sweep/metrics/result"
	"sweep/sweep/knee"
)

// CalibrationKind marks a calibration file.
const CalibrationKind = "sweep-compare-calibration"

// Calibration is the run-to-run noise of arms measured by an A/A: the same
// points run several times (sweep compare --calibrate DIR...). Compare uses
// it for the arms it covers when a comparison has no replicates.
type Calibration struct {
	Kind    string `json:"kind"`
	Version int    `json:"version"`
	Metric  Metric `json:"metric"`
	// Runs lists the directories it was made from.
	Runs []string         `json:"runs"`
	Arms []CalibrationArm `json:"arms"`
	// Source names the file it was read from (not written).
	Source string `json:"-"`
}

// CalibrationArm is one arm's noise: the σ of log value of one result,
// pooled over its points, with its degrees of freedom, and per point.
type CalibrationArm struct {
	Arm      string             `json:"arm"`
	Identity result.Identity    `json:"identity"`
	SigmaLog float64            `json:"sigma_log"`
	DF       int                `json:"df"`
	Points   []CalibrationPoint `json:"points"`
}

// CalibrationPoint is one point's repeated results.
type CalibrationPoint struct {
	Conc     int     `json:"conc"`
	N        int     `json:"n"`
	SigmaLog float64 `json:"sigma_log"`
}

// ErrNoRepeats is returned by Calibrate when no point was measured twice.
var ErrNoRepeats = errors.New("no point has two valid results: an A/A calibration needs the same points run at least twice (give several run directories, or one holding replicates)")

// Calibrate measures the noise of every arm from runs: the arms read from
// each directory (knee.Read), repeated results of one point being
// replicates. runs names the directories, for the file.
func Calibrate(runs []string, sides [][]*knee.Arm, m Metric) (*Calibration, error) {
	if m == "" {
		m = MetricTotal
	}
	type acc struct {
		id     result.Identity
		byConc map[int][]float64
	}
	arms := map[string]*acc{}
	var order []string
	for _, arms1 := range sides {
		for _, a := range arms1 {
			k := a.Identity.ArmKey()
			x := arms[k]
			if x == nil {
				x = &acc{id: a.Identity, byConc: map[int][]float64{}}
				arms[k] = x
				order = append(order, k)
			}
			for i := range a.Samples {
				s := &a.Samples[i]
				if s.Excluded != "" || s.Probe { // a probe's noise is not a full-length result's
					continue
				}
				if v := m.value(s); v != nil {
					x.byConc[s.Conc] = append(x.byConc[s.Conc], *v)
				}
			}
		}
	}
	cal := &Calibration{Kind: CalibrationKind, Version: 1, Metric: m, Runs: runs, Arms: []CalibrationArm{}}
	for _, k := range order {
		x := arms[k]
		ca := CalibrationArm{Arm: x.id.Label(), Identity: x.id, Points: []CalibrationPoint{}}
		var ss, df float64
		concs := make([]int, 0, len(x.byConc))
		for c := range x.byConc {
			concs = append(concs, c)
		}
		sort.Ints(concs)
		for _, c := range concs {
			s, d := logScatter(x.byConc[c])
			if d == 0 {
				continue
			}
			ss += s
			df += d
			ca.Points = append(ca.Points, CalibrationPoint{Conc: c, N: len(x.byConc[c]), SigmaLog: round(math.Sqrt(s/d), 6)})
		}
		if df == 0 {
			continue
		}
		ca.SigmaLog, ca.DF = round(math.Sqrt(ss/df), 6), int(df)
		cal.Arms = append(cal.Arms, ca)
	}
	if len(cal.Arms) == 0 {
		return nil, ErrNoRepeats
	}
	return cal, nil
}

// arm returns the calibration of the arm with identity id, nil when the
// calibration (which may be nil) does not cover it.
func (c *Calibration) arm(id result.Identity) *CalibrationArm {
	if c == nil {
		return nil
	}
	k := id.ArmKey()
	for i := range c.Arms {
		if c.Arms[i].Identity.ArmKey() == k {
			return &c.Arms[i]
		}
	}
	return nil
}

// WriteCalibration writes c as indented JSON.
func WriteCalibration(w io.Writer, c *Calibration) error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// ReadCalibration reads a calibration file written by WriteCalibration,
// strictly (configs.DecodeJSON): a problem, an unknown key included, is a
// *configs.Error at its line and column.
func ReadCalibration(path string) (*Calibration, error) {
	var c Calibration
	data, err := configs.ReadJSON(path, &c, "the JSON sweep compare --calibrate writes")
	if err != nil {
		return nil, err
	}
	if c.Kind != CalibrationKind || c.Version != 1 {
		return nil, fmt.Errorf("%s: kind %q version %d: want a %s version 1 file (sweep compare --calibrate)", path, c.Kind, c.Version, CalibrationKind)
	}
	for i, a := range c.Arms {
		if !(a.SigmaLog >= 0) || math.IsInf(a.SigmaLog, 0) || a.DF < 1 {
			return nil, configs.JSONElementErrorf(path, data, "arms", i, fmt.Sprintf("arms[%d]", i),
				"arm %s: sigma_log %g with df %d: want a finite σ ≥ 0 and df ≥ 1", a.Arm, a.SigmaLog, a.DF)
		}
	}
	c.Source = path
	return &c, nil
}

// logScatter is the sum of squares of ln v around its mean and its degrees
// of freedom (0, 0 for fewer than two values).
func logScatter(v []float64) (ss, df float64) {
	if len(v) < 2 {
		return 0, 0
	}
	ls := make([]float64, len(v))
	for i, x := range v {
		ls[i] = math.Log(x)
	}
	m := stats.Mean(ls)
	for _, l := range ls {
		ss += (l - m) * (l - m)
	}
	return ss, float64(len(v) - 1)
}
