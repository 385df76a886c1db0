package campaign

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"sweep/configs"
	"sweep/internal/atomicfile"
	"sweep/internal/filename"
	"sweep/internal/inputfile"
	"sweep/recipes"
	"sweep/sweep/run"
)

// ArmJob is one arm's points as a file, for an executor that runs the
// arm on another node (`sweep run-arm --job FILE`): the node needs no
// configs, it runs exactly these planned points.
type ArmJob struct {
	Arm    Arm      `json:"arm"` // Arm.Points is empty; see Points
	Points []*Point `json:"points"`
	// PointTimeouts are the watchdog bounds of the points, in seconds.
	PointTimeouts []float64   `json:"point_timeouts"`
	Settings      ArmSettings `json:"settings"`
	// Env are variables the arm's processes get on the node (a launcher's
	// per-job caches); SlurmJobID in a value is the job's id there.
	Env map[string]string `json:"env,omitempty"`
	// Client, when set, is the client environment the node makes once
	// before the arm's engine starts (InferenceX's aiperf venv and trace
	// set); its aiperf measures every point. SlurmJobID in its RuntimeDir
	// is the job's id there.
	Client *recipes.ClientEnv `json:"client_env,omitempty"`
}

// ArmCommand is how a node runs an arm's job: the argv that runs sweep
// (run-arm and its flags follow it), the job's ArmJob.Env and its
// ArmJob.Client, and the step the job runs on its node first.
type ArmCommand struct {
	Argv []string
	// Import, when set, is the argv the job runs on its node before Argv
	// (its runner's image import, an srun step of the job); a failed
	// import ends the job before Argv, and its output's last line is why
	// the arm's points failed.
	Import []string
	Env    map[string]string
	Client *recipes.ClientEnv
}

// SlurmJobID stands for the job's id in ArmJob.Env values.
const SlurmJobID = "${SLURM_JOB_ID}"

// JobEnv is Env for the job jobID (the node's $SLURM_JOB_ID): an error
// when a value needs the id and there is none.
func (aj *ArmJob) JobEnv(jobID string) (map[string]string, error) {
	out := make(map[string]string, len(aj.Env))
	for k, v := range aj.Env {
		if strings.Contains(v, SlurmJobID) && jobID == "" {
			return nil, fmt.Errorf("arm job: %s=%s needs the Slurm job id, and SLURM_JOB_ID is not set: run-arm runs as the job's step", k, v)
		}
		out[k] = strings.ReplaceAll(v, SlurmJobID, jobID)
	}
	return out, nil
}

// JobClient is Client for the job jobID (nil without one): an error when
// its runtime directory needs the id and there is none.
func (aj *ArmJob) JobClient(jobID string) (*recipes.ClientEnv, error) {
	if aj.Client == nil {
		return nil, nil
	}
	ce := *aj.Client
	if strings.Contains(ce.RuntimeDir, SlurmJobID) && jobID == "" {
		return nil, fmt.Errorf("arm job: the client environment's %s needs the Slurm job id, and SLURM_JOB_ID is not set: run-arm runs as the job's step", ce.RuntimeDir)
	}
	ce.RuntimeDir = strings.ReplaceAll(ce.RuntimeDir, SlurmJobID, jobID)
	return &ce, nil
}

// ArmSettings say how a node runs an arm's points.
type ArmSettings struct {
	Simulate  bool    `json:"simulate"`
	TimeScale float64 `json:"time_scale,omitempty"`
	WallClock bool    `json:"wall_clock,omitempty"` // simulate on the compressed wall clock, not the virtual one
	SimGPU    string  `json:"sim_gpu,omitempty"`
	// SimCalibration is the simulated engine's calibration file.
	SimCalibration string `json:"sim_calibration,omitempty"`
	Aiperf         string `json:"aiperf,omitempty"` // "": the built-in load generator
	AiperfSchema   string `json:"aiperf_schema"`
	PowerGPUs      string `json:"power_gpus,omitempty"` // --power-gpus ("": all)
	// StopGrace and ReadyTimeout in seconds (0: the runner's defaults;
	// a negative StopGrace kills at once).
	StopGrace    float64 `json:"stop_grace,omitempty"`
	ReadyTimeout float64 `json:"ready_timeout,omitempty"`
}

// NewArmJob returns job as a file's content, with each point's watchdog.
func NewArmJob(job Job, timeout func(*Point) time.Duration, s ArmSettings) *ArmJob {
	aj := &ArmJob{Arm: *job.Arm, Points: job.Points, Settings: s}
	aj.Arm.Points = nil
	for _, p := range job.Points {
		var sec float64
		if timeout != nil {
			sec = timeout(p).Seconds()
		}
		aj.PointTimeouts = append(aj.PointTimeouts, sec)
	}
	return aj
}

// Job returns the job to run and its watchdog, as RunArm takes them.
func (aj *ArmJob) Job() (Job, ArmOptions) {
	arm := aj.Arm
	arm.Points = aj.Points
	limits := map[string]time.Duration{}
	for i, p := range aj.Points {
		if i < len(aj.PointTimeouts) {
			limits[p.ID] = time.Duration(aj.PointTimeouts[i] * float64(time.Second))
		}
	}
	return Job{Arm: &arm, Points: aj.Points}, ArmOptions{PointTimeout: func(p *Point) time.Duration { return limits[p.ID] }}
}

// Write writes the job file atomically.
func (aj *ArmJob) Write(path string) error { return atomicfile.WriteJSON(path, aj) }

// ReadArmJob reads a job file; unknown keys are errors.
func ReadArmJob(path string) (*ArmJob, error) {
	var aj ArmJob
	if _, err := configs.ReadJSON(path, &aj, "an arm job file as sweep writes it"); err != nil {
		return nil, err
	}
	if len(aj.Points) == 0 {
		return nil, fmt.Errorf("%s: the arm job has no points", path)
	}
	for _, p := range aj.Points {
		// The point's directory beside the job's sweep directory.
		if err := filename.Check("point ID", p.ID); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return &aj, nil
}

// EventLog is a per-job file of Records, one JSON line each, synced after
// each: a node writes it, the executor that submitted the job follows it.
type EventLog struct {
	mu sync.Mutex
	f  *os.File
}

// CreateEventLog opens path for appending (creating it).
func CreateEventLog(path string) (*EventLog, error) {
	f, err := atomicfile.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return &EventLog{f: f}, nil
}

// Append writes one record; errors are returned for the caller to report.
func (l *EventLog) Append(r Record) error {
	if r.Time.IsZero() {
		r.Time = time.Now().UTC()
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.f.Write(append(data, '\n')); err != nil {
		return err
	}
	return l.f.Sync()
}

// Close closes the file.
func (l *EventLog) Close() error { return l.f.Close() }

// EventFollower reads the complete records appended to an event log
// since its last call.
type EventFollower struct {
	Path string
	off  int64
}

// Next returns the records completed since the last call (none when the
// file does not exist yet).
func (f *EventFollower) Next() ([]Record, error) {
	// Never blocks on a FIFO; the log is bounded as a journal is.
	file, err := inputfile.Open(f.Path, inputfile.Journal)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer file.Close()
	if _, err := file.Seek(f.off, io.SeekStart); err != nil {
		return nil, err
	}
	data, err := file.ReadAll()
	if err != nil {
		return nil, err
	}
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return nil, nil
	}
	recs, _, err := parseJournal(f.Path, data[:end+1])
	if err != nil {
		return nil, err
	}
	f.off += int64(end + 1)
	return recs, nil
}

// NewArmSettings are the settings that run points on a node as setup and
// the runner options po run them here.
func NewArmSettings(setup run.Setup, po run.Options) ArmSettings {
	return ArmSettings{Simulate: setup.Simulate, TimeScale: setup.TimeScale, WallClock: setup.WallClock, SimGPU: setup.SimGPU, SimCalibration: setup.SimCalibration,
		Aiperf: setup.Aiperf, AiperfSchema: setup.AiperfSchema, PowerGPUs: setup.PowerGPUs, StopGrace: po.StopGrace.Seconds(), ReadyTimeout: po.ReadyTimeout.Seconds()}
}

// Runner is the setup and the runner options the settings stand for, as
// the node runs its arm with them (a simulation on the simulation's
// defaults, run.Options.Simulated).
func (s ArmSettings) Runner() (run.Setup, run.Options) {
	setup := run.Setup{Simulate: s.Simulate, TimeScale: s.TimeScale, WallClock: s.WallClock, SimGPU: s.SimGPU, SimCalibration: s.SimCalibration, Aiperf: s.Aiperf, AiperfSchema: s.AiperfSchema,
		PowerGPUs: s.PowerGPUs}
	po := run.Options{
		StopGrace:    time.Duration(s.StopGrace * float64(time.Second)),
		ReadyTimeout: time.Duration(s.ReadyTimeout * float64(time.Second)),
	}
	if s.Simulate {
		po = po.Simulated(s.TimeScale)
	}
	return setup, po
}

// FailJob fails every point of a job that never ran (it could not be
// started, or ended before its first point), with why: no server started
// for them (Record.NoServer).
func FailJob(job Job, obs Observer, why string) {
	for _, p := range job.Points {
		obs(Record{Event: EventPointStart, Arm: job.Arm.Index + 1, Point: p.ID, Index: p.Index + 1, Conc: p.Conc(), NoServer: true})
		obs(Record{Event: EventPointEnd, Arm: job.Arm.Index + 1, Point: p.ID, Index: p.Index + 1, Conc: p.Conc(), Status: StatusFailed, Error: why})
	}
}

// CloseOpen ends the points of a job that its node started and did not
// finish (Open), with status and why, whether the run was a probe, and
// the load time the node recorded when the point was stopped from
// outside (0 when it recorded none: the summary's GPU-hours then leave
// the run out, Spent).
func (r *RemoteArm) CloseOpen(job Job, obs Observer, status, why string) {
	for _, p := range job.Points {
		if r.Open[p.ID] {
			obs(Record{Event: EventPointEnd, Arm: job.Arm.Index + 1, Point: p.ID, Index: p.Index + 1, Conc: p.Conc(), Status: status, Error: why,
				Seconds: r.stopped[p.ID], Probe: r.probe[p.ID]})
		}
	}
}

// RemoteArm follows an arm that runs in another process (a Slurm job, a
// container) through its event log, forwarding the records to an
// Observer and tracking the points it started.
type RemoteArm struct {
	Follower EventFollower
	// Open are the points started and not ended; Started every point
	// started at all.
	Open, Started map[string]bool
	// stopped is the load time the remote side recorded for an open
	// point it ended as interrupted while ours was not (Forward); probe
	// says an open point's run is a probe.
	stopped map[string]float64
	probe   map[string]bool
}

// NewRemoteArm follows the event log at path.
func NewRemoteArm(path string) *RemoteArm {
	return &RemoteArm{Follower: EventFollower{Path: path}, Open: map[string]bool{}, Started: map[string]bool{}, stopped: map[string]float64{}, probe: map[string]bool{}}
}

// Forward passes the records logged since the last call to obs. The
// remote processes are not this host's (their PIDs are dropped). A point
// the remote side recorded as interrupted while ours (ctx) was not was
// stopped from outside (scancel, a time limit, docker kill): it stays
// open, for the caller to fail with the reason it knows (CloseOpen, with
// the load time the remote side recorded).
func (r *RemoteArm) Forward(ctx context.Context, obs Observer) error {
	recs, err := r.Follower.Next()
	if err != nil {
		return err
	}
	for _, rec := range recs {
		rec.PIDs, rec.Tags = nil, nil
		switch rec.Event {
		case EventPointStart:
			r.Open[rec.Point], r.Started[rec.Point], r.probe[rec.Point] = true, true, rec.Probe
		case EventPointEnd:
			if rec.Status == StatusInterrupted && ctx.Err() == nil {
				r.stopped[rec.Point] = rec.Seconds
				continue
			}
			delete(r.Open, rec.Point)
		}
		obs(rec)
	}
	return nil
}

// NotStarted are the job's points the remote side never started.
func (r *RemoteArm) NotStarted(job Job) Job {
	left := Job{Arm: job.Arm}
	for _, p := range job.Points {
		if !r.Started[p.ID] {
			left.Points = append(left.Points, p)
		}
	}
	return left
}

// NextArmJobStem is dir/armNN-tK for the first K not taken yet (an arm job
// file's name without .json: each try of an arm gets its own); a name
// that cannot be looked up (a symlink loop, no search permission) is an
// error.
func NextArmJobStem(dir string, arm int) (string, error) {
	for k := 1; ; k++ {
		stem := filepath.Join(dir, fmt.Sprintf("arm%02d-t%d", arm, k))
		_, err := os.Lstat(stem + ".json")
		switch {
		case errors.Is(err, os.ErrNotExist):
			return stem, nil
		case err != nil:
			return "", fmt.Errorf("arm job file: %w", err)
		}
	}
}
