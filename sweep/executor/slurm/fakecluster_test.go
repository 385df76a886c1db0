package slurm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"sweep/metrics/result"
	"sweep/sweep/campaign"
)

// fakeCluster is a one-node Slurm behind the Commander interface, for
// the executor's tests. sbatch queues a job; slurmctld (each command it
// answers) starts a pending job when the node has its GPUs free and runs
// its program with the node function in a goroutine; the job ends
// COMPLETED or FAILED by the program's error, or with the state scancel
// or end gives it. squeue and sacct answer in Slurm 22.05's JSON shapes.
// While down is set slurmctld does not answer (and schedules nothing):
// squeue prints what Slurm 22.05's prints then, the other commands fail;
// forget makes squeue drop ended jobs, as after MinJobAge, so only sacct
// still knows them.
type fakeCluster struct {
	node func(ctx context.Context, argv []string) error
	gpus int // the node's GPUs

	mu     sync.Mutex
	jobs   map[JobID]*fakeJob
	order  []JobID
	calls  []string // argv[0] of every command, answered or not
	down   bool
	forget bool
	// refused counts the commands not answered while down.
	refused int
	// scancelled lists the ids scancel was run on.
	scancelled []JobID
	// noAccounting is a cluster without slurmdbd (as the test cluster):
	// sacct fails.
	noAccounting bool
	// hold keeps every job pending with this reason (the node never
	// gives them their resources).
	hold    string
	running sync.WaitGroup // node programs still running
}

type fakeJob struct {
	id     JobID
	name   string   // --job-name
	output string   // --output, as given
	uid    int      // the submitting user's id (this process's unless a test changes it)
	script string   // the batch script
	argv   []string // the program after the script
	gpus   int
	held   bool // sbatch --hold, until scontrol release
	state  State
	reason string
	exit   int // raw wait status, as squeue reports it
	start  time.Time
	end    time.Time
	stop   context.CancelFunc
}

var errControllerDown = errors.New("exit status 1")

// squeueDown is squeue --json's output when slurmctld does not answer.
var squeueDown = func() []byte {
	data, err := os.ReadFile("../../../testdata/slurm/squeue-22.05-controller-down.json")
	if err != nil {
		panic(err)
	}
	return data
}()

func newFakeCluster(gpus int, node func(ctx context.Context, argv []string) error) *fakeCluster {
	return &fakeCluster{node: node, gpus: gpus, jobs: map[JobID]*fakeJob{}}
}

// Run implements Commander.
func (c *fakeCluster) Run(ctx context.Context, argv []string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, &CommandError{Argv: argv, Err: err}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, argv[0])
	if argv[0] == "sacct" && c.noAccounting {
		return nil, &CommandError{Argv: argv, Err: errControllerDown, Stderr: "Slurm accounting storage is disabled\n"}
	}
	if c.down {
		c.refused++
		if argv[0] == "squeue" {
			return squeueDown, nil // Slurm 22.05 exits 0 then
		}
		return nil, &CommandError{Argv: argv, Err: errControllerDown,
			Stderr: argv[0] + ": error: Unable to contact slurm controller (connect failure)\n"}
	}
	defer c.schedule()
	switch argv[0] {
	case "sbatch":
		return c.sbatch(argv)
	case "squeue":
		return c.squeue()
	case "sacct":
		return c.sacct(JobID(argv[len(argv)-1]))
	case "scancel":
		c.scancelled = append(c.scancelled, JobID(argv[1]))
		j, ok := c.jobs[JobID(argv[1])]
		if !ok {
			return nil, &CommandError{Argv: argv, Err: errControllerDown, Stderr: "scancel: error: Invalid job id " + argv[1] + "\n"}
		}
		if j.state.Done() {
			return nil, &CommandError{Argv: argv, Err: errControllerDown, Stderr: "scancel: error: Kill job error on job id " + argv[1] + ": Job/step already completing or completed\n"}
		}
		c.endLocked(j, "CANCELLED", 15)
		return nil, nil
	case "scontrol":
		if j, ok := c.jobs[JobID(argv[len(argv)-1])]; ok && len(argv) == 3 && argv[1] == "release" {
			j.held = false
			return nil, nil
		}
	}
	return nil, &CommandError{Argv: argv, Err: errors.New("exit status 127"), Stderr: argv[0] + ": not found"}
}

func (c *fakeCluster) sbatch(argv []string) ([]byte, error) {
	j := &fakeJob{id: JobID(strconv.Itoa(len(c.order) + 1)), state: "PENDING", reason: "None", uid: os.Getuid()}
	for i, a := range argv[2:] {
		if !strings.HasPrefix(a, "-") {
			j.script, j.argv = a, argv[2+i+1:] // the script's arguments
			break
		}
		if n, ok := strings.CutPrefix(a, "--gres=gpu:"); ok {
			j.gpus, _ = strconv.Atoi(n)
		}
		if n, ok := strings.CutPrefix(a, "--job-name="); ok {
			j.name = n
		}
		if n, ok := strings.CutPrefix(a, "--output="); ok {
			j.output = n
		}
		if a == "--hold" {
			j.held, j.reason = true, "JobHeldUser"
		}
	}
	if j.gpus > c.gpus {
		return nil, &CommandError{Argv: argv, Err: errControllerDown,
			Stderr: "sbatch: error: Batch job submission failed: Requested node configuration is not available\n"}
	}
	c.jobs[j.id] = j
	c.order = append(c.order, j.id)
	return []byte(string(j.id) + "\n"), nil
}

// runScript runs a job's batch script on its arguments with node as its
// command: WrapperScript's command is node's argv; ImportScript's import
// runs for real (bash), its own command stood in by true, then node runs
// the rest unless the import failed. What the script writes goes to
// output, as to the job's --output file, and so does the error node
// returns (its stderr).
func runScript(ctx context.Context, script string, argv []string, node func(context.Context, []string) error, output io.Writer) error {
	if filepath.Base(script) == importScriptName {
		n, err := strconv.Atoi(argv[1])
		if err != nil || len(argv) < 2+n {
			return fmt.Errorf("not an import job's arguments: %q", argv)
		}
		cmd := exec.CommandContext(ctx, "bash", append(append([]string{script}, argv[:2+n]...), "true")...)
		out, err := cmd.CombinedOutput()
		_, _ = output.Write(out)
		if err != nil {
			return fmt.Errorf("%s: %w (%s)", script, err, out)
		}
		argv = argv[2+n:]
	}
	err := node(ctx, argv)
	if err != nil && ctx.Err() == nil {
		fmt.Fprintln(output, err)
	}
	return err
}

// jobOutput is the job's --output file opened for appending (io.Discard
// without one); close closes it.
func jobOutput(path string) (w io.Writer, close func()) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if path == "" || err != nil {
		return io.Discard, func() {}
	}
	return f, func() { _ = f.Close() }
}

// schedule starts the pending jobs the node has GPUs for, in order.
func (c *fakeCluster) schedule() {
	free := c.gpus
	for _, id := range c.order {
		if j := c.jobs[id]; j.state == "RUNNING" {
			free -= j.gpus
		}
	}
	for _, id := range c.order {
		j := c.jobs[id]
		if j.state != "PENDING" {
			continue
		}
		if j.held {
			continue
		}
		if c.hold != "" || j.gpus > free {
			j.reason = c.hold
			if j.reason == "" {
				j.reason = "Resources"
			}
			continue
		}
		free -= j.gpus
		ctx, stop := context.WithCancel(context.Background())
		j.state, j.reason, j.start, j.stop = "RUNNING", "None", time.Now(), stop
		c.running.Add(1)
		go func() {
			defer c.running.Done()
			output, closeOutput := jobOutput(j.output)
			err := runScript(ctx, j.script, j.argv, c.node, output)
			closeOutput()
			c.mu.Lock()
			defer c.mu.Unlock()
			switch {
			case j.state.Done(): // scancel or end came first
			case err != nil:
				j.state, j.reason, j.exit, j.end = "FAILED", "NonZeroExitCode", 1<<8, time.Now()
			default:
				j.state, j.reason, j.end = "COMPLETED", "None", time.Now()
			}
		}()
	}
}

// end ends a job from outside (scancel by someone else, a node failure,
// the time limit): its program is stopped and the job has state at once,
// as squeue shows it while the node still cleans up.
func (c *fakeCluster) end(id JobID, state State) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endLocked(c.jobs[id], state, 9)
}

func (c *fakeCluster) endLocked(j *fakeJob, state State, signal int) {
	j.state, j.reason, j.end = state, "None", time.Now()
	if j.stop != nil {
		j.exit = signal
		j.stop()
	}
}

func (c *fakeCluster) squeue() ([]byte, error) {
	type job struct {
		JobID       int    `json:"job_id"`
		JobState    State  `json:"job_state"`
		StateReason string `json:"state_reason"`
		ExitCode    int    `json:"exit_code"`
		StartTime   int64  `json:"start_time"`
		EndTime     int64  `json:"end_time"`
		Name        string `json:"name"`
		Output      string `json:"standard_output"`
		Cwd         string `json:"current_working_directory"`
		UserID      int    `json:"user_id"`
		UserName    string `json:"user_name"`
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	out := struct {
		Jobs   []job `json:"jobs"`
		Errors []any `json:"errors"`
	}{Jobs: []job{}, Errors: []any{}}
	for _, id := range c.order {
		j := c.jobs[id]
		if c.forget && j.state.Done() {
			continue
		}
		n, _ := strconv.Atoi(string(id))
		out.Jobs = append(out.Jobs, job{JobID: n, JobState: j.state, StateReason: j.reason, ExitCode: j.exit,
			StartTime: unix(j.start), EndTime: unix(j.end), Name: j.name, Output: j.output, Cwd: cwd,
			UserID: j.uid, UserName: "user" + strconv.Itoa(j.uid)})
	}
	return json.Marshal(out)
}

func (c *fakeCluster) sacct(id JobID) ([]byte, error) {
	type number struct {
		Set    bool  `json:"set"`
		Number int64 `json:"number"`
	}
	type job struct {
		JobID int `json:"job_id"`
		State struct {
			Current []State `json:"current"`
		} `json:"state"`
		ExitCode struct {
			ReturnCode number `json:"return_code"`
		} `json:"exit_code"`
		Time struct {
			Start number `json:"start"`
			End   number `json:"end"`
		} `json:"time"`
	}
	out := struct {
		Jobs []job `json:"jobs"`
	}{Jobs: []job{}}
	if j, ok := c.jobs[id]; ok {
		var r job
		r.JobID, _ = strconv.Atoi(string(id))
		r.State.Current = []State{j.state}
		r.ExitCode.ReturnCode = number{Set: true, Number: int64(j.exit >> 8)}
		r.Time.Start = number{Set: !j.start.IsZero(), Number: unix(j.start)}
		r.Time.End = number{Set: !j.end.IsZero(), Number: unix(j.end)}
		out.Jobs = append(out.Jobs, r)
	}
	return json.Marshal(out)
}

func unix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// shutdown stops every job's program and waits for them all.
// setUser makes job id another user's.
func (c *fakeCluster) setUser(id JobID, uid int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.jobs[id].uid = uid
}

func (c *fakeCluster) shutdown() {
	c.mu.Lock()
	for _, j := range c.jobs {
		if j.stop != nil {
			j.stop()
		}
	}
	c.mu.Unlock()
	c.running.Wait()
}

// refusals returns how many commands went unanswered while down.
func (c *fakeCluster) refusals() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refused
}

// cancelled returns the ids scancel was run on.
func (c *fakeCluster) cancelled() []JobID {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.scancelled)
}

func (c *fakeCluster) setDown(down bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.down = down
}

func (c *fakeCluster) setForget(forget bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forget = forget
}

// states returns every job's state, in submission order.
func (c *fakeCluster) states() []State {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []State
	for _, id := range c.order {
		out = append(out, c.jobs[id].state)
	}
	return out
}

// ids returns the ids of the jobs in state.
func (c *fakeCluster) ids(state State) []JobID {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []JobID
	for _, id := range c.order {
		if c.jobs[id].state == state {
			out = append(out, id)
		}
	}
	return out
}

// count returns how many times the command was run.
func (c *fakeCluster) count(cmd string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, s := range c.calls {
		if s == cmd {
			n++
		}
	}
	return n
}

// fakeNode is the node side of a job: what `sweep run-arm --job F
// --events E` does, against servers whose loads write a valid result at
// once, except a point held with hold.
type fakeNode struct {
	mu    sync.Mutex
	held  map[string]*heldLoad
	loads map[string]int
}

// heldLoad is a load that tells the test it started, then runs until
// released (it succeeds) or its job is stopped.
type heldLoad struct {
	started, release chan struct{}
}

func newFakeNode() *fakeNode {
	return &fakeNode{held: map[string]*heldLoad{}, loads: map[string]int{}}
}

// hold holds the point's next load: started is closed when it started,
// release lets it finish with a result.
func (n *fakeNode) hold(id string) (started <-chan struct{}, release func()) {
	n.mu.Lock()
	defer n.mu.Unlock()
	h := &heldLoad{started: make(chan struct{}), release: make(chan struct{})}
	n.held[id] = h
	return h.started, sync.OnceFunc(func() { close(h.release) })
}

func (n *fakeNode) loadsOf(id string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.loads[id]
}

// run is the job's program: Program, "run-arm", "--job", F, "--events", E.
func (n *fakeNode) run(ctx context.Context, argv []string) error {
	i := slices.Index(argv, "run-arm")
	if i < 0 || len(argv) != i+5 || argv[i+1] != "--job" || argv[i+3] != "--events" {
		return fmt.Errorf("not a run-arm command: %q", argv)
	}
	jobFile, events := argv[i+2], argv[i+4]
	aj, err := campaign.ReadArmJob(jobFile)
	if err != nil {
		return err
	}
	log, err := campaign.CreateEventLog(events)
	if err != nil {
		return err
	}
	defer log.Close()
	job, opts := aj.Job()
	b := &fakeBackend{n: n, dir: filepath.Dir(filepath.Dir(jobFile))}
	campaign.RunArm(ctx, job, nil, b, func(r campaign.Record) { _ = log.Append(r) }, opts)
	return ctx.Err()
}

type fakeBackend struct {
	n   *fakeNode
	dir string
}

func (b *fakeBackend) StartServer(context.Context, *campaign.Arm, *campaign.Point, []int) (campaign.Server, error) {
	return &fakeServer{b: b}, nil
}

type fakeServer struct{ b *fakeBackend }

func (s *fakeServer) PIDs() []int                  { return []int{os.Getpid()} }     // dropped by the executor
func (s *fakeServer) Tags() []string               { return []string{"engine-1-0"} } // dropped by the executor
func (s *fakeServer) Healthy(context.Context) bool { return true }
func (s *fakeServer) Stop(context.Context) error   { return nil }

func (s *fakeServer) RunLoad(ctx context.Context, p *campaign.Point) campaign.Outcome {
	n := s.b.n
	n.mu.Lock()
	n.loads[p.ID]++
	held, ok := n.held[p.ID]
	delete(n.held, p.ID)
	n.mu.Unlock()
	if ok {
		close(held.started)
		select {
		case <-ctx.Done():
			return campaign.Outcome{Err: ctx.Err(), ServerGone: true}
		case <-held.release:
		}
	}
	path := filepath.Join(s.b.dir, p.ID, p.ID+".json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return campaign.Outcome{Err: err}
	}
	tput := 100.0 * float64(p.Conc())
	// The point's identity as the aggregator writes it, then the numbers.
	id, _ := json.Marshal(result.Identify(result.FactsFromRow(&p.Plan.Row, p.Plan.ResultFilename, nil, 0)))
	var res map[string]any
	_ = json.Unmarshal(id, &res)
	maps.Copy(res, map[string]any{
		"conc": p.Conc(), "num_requests_successful": 10, "valid": true, "simulated": true,
		"request_metrics": map[string]any{"throughput": map[string]any{"per_gpu": map[string]any{"total_tput_tps": tput, "output_tput_tps": tput / 10}}},
	})
	data, _ := json.Marshal(res)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return campaign.Outcome{Err: err}
	}
	return campaign.Outcome{Result: path}
}
