package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"sweep/configs/matrix"
	"sweep/recipes"
	"sweep/recipes/schema"
)

// Container directories of the client environment's host parts.
const (
	// ToolsDir holds host programs mounted into the container (uv, a
	// static binary, as the sweep binary is).
	ToolsDir = "/opt/sweep-tools"
	// CheckoutDir is where the InferenceX checkout is mounted (utils/aiperf
	// is installed editable from it).
	CheckoutDir = "/opt/inferencex"
)

// ClientSetup says how a launched point gets InferenceX's client: the
// host's InferenceX checkout (its utils/aiperf goes into a per-job venv
// made with the host's uv), or an installed aiperf in the image. Either
// way the trace set is downloaded into the hub cache unless it is there.
type ClientSetup struct {
	// Checkout is the host's InferenceX checkout ("" with Aiperf).
	Checkout string
	// Aiperf is an installed aiperf in the image ("" with Checkout).
	Aiperf string
	// UV is the host's uv, mounted at ToolsDir/uv (found on PATH when
	// empty and a venv is made).
	UV string
}

// HubCache is the point's hub cache: the container's HF_HUB_CACHE and the
// host directory mounted on it ("" when the profile mounts none).
func HubCache(p recipes.Profile, row *matrix.Row) (container, host string) {
	b := &builder{p: p, row: row}
	container = b.hubCacheRaw()
	if strings.Contains(container, "${") {
		// B300's ${HOME}/.cache/huggingface: the container's own home.
		container = DefaultHubCache
	}
	if h := p.Launch.HubCacheMount; h != nil {
		host = h(row)
	}
	return container, host
}

// RuntimeDir is benchmark_lib.sh's per-job AIPERF_RUNTIME_DIR for a job
// id (the runner name for docker launchers, which have none).
func RuntimeDir(job string) string { return "/tmp/inferencex-agentic-" + job }

// Env returns the point's client environment in the container for a job
// (JobID until it is known) and the mounts it needs.
func (s ClientSetup) Env(p recipes.Profile, row *matrix.Row, client *recipes.Command, job string) (recipes.ClientEnv, []string, error) {
	if (s.Checkout == "") == (s.Aiperf == "") {
		return recipes.ClientEnv{}, nil, errors.New("client environment: name the InferenceX checkout or an installed aiperf, one of them")
	}
	loader := ""
	if client != nil {
		f, _ := schema.ReadArgv(client.Argv, schema.ArgvOptions{}).Find("--public-dataset")
		loader = f.Value()
	}
	if loader == "" {
		return recipes.ClientEnv{}, nil, fmt.Errorf("client environment: the point's client has no --public-dataset trace loader")
	}
	hub, _ := HubCache(p, row)
	ce := recipes.ClientEnv{HubCache: hub, Loader: loader, Aiperf: s.Aiperf}
	var mounts []string
	if s.Checkout != "" {
		abs, err := filepath.Abs(s.Checkout)
		if err != nil {
			return recipes.ClientEnv{}, nil, err
		}
		s.Checkout = abs
		ce.Checkout, ce.RuntimeDir, ce.UV = CheckoutDir, RuntimeDir(job), path.Join(ToolsDir, "uv")
		// Read-write: uv's editable install writes build files beside the
		// sources, as it does in InferenceX's mounted workspace.
		mounts = append(mounts, s.Checkout+":"+CheckoutDir)
		uv, err := s.uv(exec.LookPath)
		if err == nil {
			mounts = append(mounts, uv+":"+ce.UV+":ro")
		}
	}
	return ce, mounts, nil
}

func (s ClientSetup) uv(look func(string) (string, error)) (string, error) {
	name := s.UV
	if name == "" {
		name = "uv"
	}
	p, err := look(name)
	if err != nil {
		return "", err
	}
	return filepath.Abs(p)
}

// Prepare is a launched point's client environment before allocating: its
// steps' environment for the job (key: JobKey), the mounts it needs, and
// the preflight's verdict (net nil: no network check).
func (s ClientSetup) Prepare(ctx context.Context, p recipes.Profile, row *matrix.Row, client *recipes.Command, key string, net Network) (recipes.ClientEnv, []string, error) {
	ce, mounts, err := s.Env(p, row, client, key)
	if err != nil {
		return ce, nil, err
	}
	_, hostHub := HubCache(p, row)
	err = ClientPreflight{Setup: s, Env: ce, HostHubCache: hostHub, Net: net}.Check(ctx)
	return ce, mounts, err
}

// Network reaches hosts: the preflight's check that PyPI and the Hugging
// Face hub answer before an allocation is made.
type Network interface {
	Reach(ctx context.Context, hostport string) error
}

// Dialer is the real Network: a TCP connection within Timeout (default
// 5 s).
type Dialer struct{ Timeout time.Duration }

// Reach connects to hostport and closes the connection.
func (d Dialer) Reach(ctx context.Context, hostport string) error {
	t := d.Timeout
	if t <= 0 {
		t = 5 * time.Second
	}
	c, err := (&net.Dialer{Timeout: t}).DialContext(ctx, "tcp", hostport)
	if err != nil {
		return err
	}
	return c.Close()
}

// Hosts the client environment downloads from.
const (
	PyPIHost = "pypi.org:443"
	HubHost  = "huggingface.co:443"
)

// ClientPreflight checks on the host, before anything is allocated, that
// the client environment can be made: the checkout holds utils/aiperf and
// the requirements, uv is installed, and PyPI (for the per-job venv) and
// the Hugging Face hub (unless the host's hub cache already holds the trace
// set) answer. Every problem is named, with its fix.
type ClientPreflight struct {
	Setup ClientSetup
	Env   recipes.ClientEnv
	// HostHubCache is the host directory mounted on Env.HubCache ("":
	// none, or not visible here: the download is then assumed needed).
	HostHubCache string
	LookPath     func(string) (string, error)
	Net          Network
}

// Check runs the preflight.
func (c ClientPreflight) Check(ctx context.Context) error {
	look := c.LookPath
	if look == nil {
		look = exec.LookPath
	}
	var errs []error
	var needPyPI bool
	if c.Setup.Checkout != "" {
		for _, f := range []string{"utils/aiperf/pyproject.toml", "utils/agentic-benchmark/requirements.txt"} {
			if _, err := os.Stat(filepath.Join(c.Setup.Checkout, f)); err != nil {
				errs = append(errs, fmt.Errorf("InferenceX checkout %s has no %s: give the root of an InferenceX checkout (--inferencex), or an installed aiperf (--aiperf)", c.Setup.Checkout, f))
			}
		}
		if _, err := c.Setup.uv(look); err != nil {
			errs = append(errs, fmt.Errorf("uv is not installed here (%v): the per-job aiperf venv is made with it (it is mounted into the image); install uv (https://docs.astral.sh/uv/), or name an installed aiperf (--aiperf)", err))
		}
		needPyPI = true // the venv is per job: it is never there before the job
	}
	dataset, err := recipes.TraceDataset(c.Env.Loader)
	if err != nil {
		errs = append(errs, err)
	}
	needHub := err == nil && !c.tracesHere(dataset)
	if c.Net != nil {
		if needPyPI {
			if err := c.Net.Reach(ctx, PyPIHost); err != nil {
				errs = append(errs, fmt.Errorf("no network to PyPI (%s: %v): the per-job aiperf venv installs from it; name an installed aiperf (--aiperf) or run where PyPI is reachable", PyPIHost, err))
			}
		}
		if needHub {
			if err := c.Net.Reach(ctx, HubHost); err != nil {
				where := "the hub cache"
				if c.HostHubCache != "" {
					where = c.HostHubCache
				}
				errs = append(errs, fmt.Errorf("no network to the Hugging Face hub (%s: %v) and %s does not hold the trace set %s: download it there first (hf download --repo-type dataset %s)",
					HubHost, err, where, dataset, dataset))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("client environment (before allocating): %w", errors.Join(errs...))
	}
	return nil
}

// tracesHere says the host's hub cache holds a snapshot of the dataset.
func (c ClientPreflight) tracesHere(dataset string) bool {
	if c.HostHubCache == "" {
		return false
	}
	m, _ := filepath.Glob(filepath.Join(recipes.HubDatasetDir(c.HostHubCache, dataset), "snapshots", "*", "*"))
	return len(m) > 0
}

// StepRunner runs a setup step's program.
type StepRunner interface {
	Run(ctx context.Context, argv []string, env map[string]string) error
}

// ExecSteps is the real StepRunner: the program with this process's
// environment plus env, its output to Out.
type ExecSteps struct{ Out io.Writer }

// Run runs argv to its end.
func (e ExecSteps) Run(ctx context.Context, argv []string, env map[string]string) error {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = e.Out, e.Out
	return cmd.Run()
}

// present says every pattern matches a path.
func present(patterns []string) bool {
	if len(patterns) == 0 {
		return false
	}
	for _, p := range patterns {
		m, _ := filepath.Glob(p)
		if len(m) == 0 {
			return false
		}
	}
	return true
}

// RunSetup runs the client environment's steps in the container, in
// order: a step whose work is present is skipped, a step's program that is
// not installed is an error naming the step, and a step must leave its
// Creates behind. progress gets one line per step.
func RunSetup(ctx context.Context, steps []recipes.SetupStep, r StepRunner, progress func(string)) error {
	if progress == nil {
		progress = func(string) {}
	}
	for _, s := range steps {
		if present(s.Present) {
			progress(fmt.Sprintf("client setup %s: already there, skipped", s.Name))
			continue
		}
		prog := s.Argv[0]
		if _, err := exec.LookPath(prog); err != nil {
			return fmt.Errorf("client setup %s: %s is not installed in the image (%v)", s.Name, prog, err)
		}
		progress(fmt.Sprintf("client setup %s: %s", s.Name, strings.Join(s.Argv, " ")))
		if err := r.Run(ctx, s.Argv, s.Env); err != nil {
			return fmt.Errorf("client setup %s (%s): %w", s.Name, strings.Join(s.Argv[:min(3, len(s.Argv))], " "), err)
		}
		for _, c := range s.Creates {
			if _, err := os.Stat(c); err != nil {
				return fmt.Errorf("client setup %s ran but left no %s: the environment is incomplete", s.Name, c)
			}
		}
	}
	return nil
}

// MakeClient makes a launched arm's client environment in its container
// (RunSetup of ce's steps, once per job, before the engine starts) and
// returns the aiperf that measures every point of the arm.
func MakeClient(ctx context.Context, ce recipes.ClientEnv, r StepRunner, progress func(string)) (string, error) {
	steps, err := ce.Steps()
	if err != nil {
		return "", err
	}
	if err := RunSetup(ctx, steps, r, progress); err != nil {
		return "", err
	}
	return ce.AiperfProgram(), nil
}
