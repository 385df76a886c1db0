package recipes

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"

	"sweep/configs/matrix"
	"sweep/metrics/aiperf"
	"sweep/recipes/schema"
)

// OnHosts is the same point laid out with its router and workers at
// hosts (PlanMultiNodeOnHosts: hosts[0] the router's, then the
// workers'), on the same ports and into the same directory.
func (l *LocalMultiNode) OnHosts(hosts []string) (*LocalMultiNode, error) {
	if l.row == nil {
		return nil, fmt.Errorf("%s: not planned by PlanMultiNodeOnHosts", l.ResultFilename)
	}
	return PlanMultiNodeOnHosts(l.row, l.Conc, l.opts, l.ports, hosts)
}

// LocalWorkerCount is how many ports PlanLocalMultiNode needs for a
// planned point: one per prefill and decode worker, plus the router's.
func LocalWorkerCount(p *MultiNodePoint) int {
	n := 0
	for _, r := range p.Roles {
		if r.Role == RolePrefill || r.Role == RoleDecode {
			n += r.Workers
		}
	}
	return n
}

// PlanLocalMultiNode plans one concurrency of a multi-node row with every
// role on this host: the router on ports[0], the workers (prefill, then
// decode) on ports[1:]. Only points whose worker and router commands sweep
// builds itself (the AMD disaggregated path, job.slurm) can be laid out:
// srt-slurm renders the NVIDIA points' commands from recipe files sweep
// does not read, and a worker spanning several nodes needs its nodes'
// rendezvous. Either is ErrNotSupported, with the reason.
func PlanLocalMultiNode(row *matrix.Row, conc int, opts PlanOptions, ports []int) (*LocalMultiNode, error) {
	return PlanMultiNodeOnHosts(row, conc, opts, ports, nil)
}

// PlanMultiNodeOnHosts is PlanLocalMultiNode with the router and each
// worker at an address of its own: hosts[0] is the router's (and the
// client's) node address, hosts[1:] the workers' (prefill, then decode),
// as ports. The workers listen on their node's address, the router and
// the client reach them by it. No hosts: every role on this host's
// loopback.
func PlanMultiNodeOnHosts(row *matrix.Row, conc int, opts PlanOptions, ports []int, hosts []string) (*LocalMultiNode, error) {
	if hosts != nil && len(hosts) != len(ports) {
		return nil, fmt.Errorf("%s: %d host(s) for %d port(s)", row.ConfigKey, len(hosts), len(ports))
	}
	host := func(i int, local string) string {
		if hosts == nil {
			return local
		}
		return hosts[i]
	}
	cfg, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if !slices.Contains(row.Concs, conc) {
		return nil, fmt.Errorf("%s %s has concurrencies %v, not %d", row.ConfigKey, row.ExpName, row.Concs, conc)
	}
	r := row.Clone()
	r.Concs, r.Conc = []int{conc}, conc
	p, err := cfg.planMultiNode(r)
	if err != nil {
		return nil, err
	}
	if !p.Disagg {
		return nil, notSupported("%s is aggregated multi-node serving (one worker role across nodes): only disaggregated points run on one host", r.ConfigKey)
	}
	if p.Submitter != "sbatch" {
		return nil, notSupported("%s runs through srt-slurm (srtctl apply), which renders its workers' and frontend's commands from %s; sweep does not read srt-slurm recipes, so it cannot run their engines itself", r.ConfigKey, p.Recipe)
	}
	if want := 1 + LocalWorkerCount(&p); len(ports) != want {
		return nil, fmt.Errorf("%s: %d port(s) given, want %d (the router and %d worker(s))", r.ConfigKey, len(ports), want, want-1)
	}
	l := &LocalMultiNode{Point: p, Conc: conc, ResultDir: cfg.ResultDir, RequiredMetricPrefix: "sglang:",
		ResultFilename: p.ResultFilename + "_conc" + strconv.Itoa(conc), Escapes: slices.Clone(p.Escapes),
		row: row.Clone(), opts: opts, ports: slices.Clone(ports)}
	addrs := map[string]string{} // the router's worker URLs in job.slurm → local ones
	var router *RolePlan
	next := 1
	for i := range p.Roles {
		role := &p.Roles[i]
		switch role.Role {
		case RoleRouter:
			router = role
			continue
		case RolePrefill, RoleDecode:
		default:
			continue
		}
		if role.NodesPerWorker > 1 {
			return nil, notSupported("a %s worker of %s spans %d nodes (--nnodes with a rendezvous address); one host runs workers of one node each", role.Role, r.ExpName, role.NodesPerWorker)
		}
		if role.Command == nil {
			return nil, fmt.Errorf("%s: the %s role has no command", r.ConfigKey, role.Role)
		}
		for w := range role.Workers {
			port, addr := ports[next], host(next, "127.0.0.1")
			next++
			argv, err := withAddress(role.Command.Argv, addr, port)
			if err != nil {
				return nil, fmt.Errorf("%s %s worker: %w", r.ConfigKey, role.Role, err)
			}
			base := "http://" + net.JoinHostPort(addr, strconv.Itoa(port))
			addrs[fmt.Sprintf("http://${%s_%d_ADDR}:%d", strings.ToUpper(string(role.Role)), w, amdWorkerPort)] = base
			l.Workers = append(l.Workers, LocalWorker{
				Name: string(role.Role) + strconv.Itoa(w), Role: role.Role,
				Command: Command{Argv: argv, Env: maps.Clone(role.Command.Env)}, Host: addr,
				HealthURL: base + "/health", MetricsURL: base + "/metrics",
			})
			l.MetricsURLs = append(l.MetricsURLs, base+"/metrics")
		}
	}
	if router == nil || router.Command == nil {
		return nil, fmt.Errorf("%s: the plan has no router command", r.ConfigKey)
	}
	rargv := slices.Clone(router.Command.Argv)
	for i, a := range rargv {
		if u, ok := addrs[a]; ok {
			rargv[i] = u
		}
	}
	rargv, err = withFlagValue(rargv, "--port", strconv.Itoa(ports[0]))
	if err != nil {
		return nil, fmt.Errorf("%s router: %w", r.ConfigKey, err)
	}
	if a := slices.IndexFunc(rargv, func(a string) bool { return strings.Contains(a, "${") }); a >= 0 {
		return nil, fmt.Errorf("%s router: argument %q names a node address this host does not have", r.ConfigKey, rargv[a])
	}
	l.Router = Command{Argv: rargv, Env: map[string]string{}}
	l.RouterHost = host(0, "localhost")
	routerURL := "http://" + net.JoinHostPort(l.RouterHost, strconv.Itoa(ports[0]))
	l.RouterHealthURL = routerURL + "/health"

	// The client: InferenceX's replay settings against the router, with
	// the model name the workers serve (their --model-path).
	wargv := l.Workers[0].Command.Argv
	model, _ := schema.ReadArgv(wargv, schema.ArgvOptions{Schema: schema.OfProgram(wargv)}).Find("--model-path")
	served := model.Value()
	c := &Ctx{Row: r, Parallelism: r.Prefill.Parallelism, Conc: conc, Port: ports[0], EnginePort: ports[0],
		Model: served, ModelPath: served, ResultDir: cfg.ResultDir}
	rc := &Recipe{Client: Client{ServerMetrics: true, RequiredMetricPrefix: l.RequiredMetricPrefix}}
	rs := replaySettings{URL: routerURL, Duration: cfg.duration(r), WarmupPerLane: officialWarmupPerLane,
		ArtifactDir: aiperf.ArtifactDir(cfg.ResultDir), ServerMetrics: l.MetricsURLs}
	if cfg.Fast {
		rs.WarmupPerLane = fastWarmupPerLane
	}
	cargv, cesc, err := build(cfg.aiperf, c, rc, clientArgs(c, rc, cfg.aiperf, rs))
	if err != nil {
		return nil, fmt.Errorf("%s client: %w", r.ConfigKey, err)
	}
	env := maps.Clone(replayEnv)
	env["AIPERF_FAILED_REQUEST_THRESHOLD"] = failedRequestThreshold
	env["AIPERF_REQUIRED_SERVER_METRIC_PREFIX"] = l.RequiredMetricPrefix
	l.Client = Command{Argv: cargv, Env: env}
	l.Escapes = append(l.Escapes, cesc...)
	return l, nil
}

// withAddress is a worker argv listening on addr:port instead of the
// node's address and job.slurm's port.
func withAddress(argv []string, addr string, port int) ([]string, error) {
	out, err := withFlagValue(argv, "--port", strconv.Itoa(port))
	if err != nil {
		return nil, err
	}
	if out, err = withFlagValue(out, "--host", addr); err != nil {
		return nil, err
	}
	if a := slices.IndexFunc(out, func(a string) bool { return strings.Contains(a, "${") }); a >= 0 {
		return nil, fmt.Errorf("argument %q is filled in per node by job.slurm", out[a])
	}
	return out, nil
}

// withFlagValue is argv with the value of flag replaced, in the form it
// was given (--flag VALUE or --flag=VALUE), argv read with the schema of
// its program (schema.OfProgram).
func withFlagValue(argv []string, flag, value string) ([]string, error) {
	out, ok := schema.ReadArgv(argv, schema.ArgvOptions{Schema: schema.OfProgram(argv)}).WithValue(flag, value)
	if !ok {
		return nil, fmt.Errorf("no %s VALUE in the command", flag)
	}
	return out, nil
}

// SweepPoint is the disaggregated point as a sweep's point: the row at the
// point's concurrency, the first prefill worker as its Engine, the PD
// router as its Router, the client against the router, and l itself as
// MultiNode (the other workers). Its RESULT_FILENAME is the
// per-concurrency multi-node name, <RESULT_FILENAME>_conc<N>.
func (l *LocalMultiNode) SweepPoint() Point {
	r := l.Point.Row.Clone()
	r.Concs, r.Conc = []int{l.Conc}, l.Conc
	router, client := l.Router, l.Client
	w := l.Workers[0]
	return Point{
		Row: *r, Recipe: l.Point.Launcher,
		Engine: w.Command, CommandFile: w.CommandFile(),
		Router: &router, Client: &client,
		MetricsURLs: slices.Clone(l.MetricsURLs), RequiredMetricPrefix: l.RequiredMetricPrefix,
		HealthURL: w.HealthURL, RouterHealthURL: l.RouterHealthURL,
		ResultDir: l.ResultDir, ResultFilename: l.ResultFilename,
		Escapes: slices.Clone(l.Escapes), MultiNode: l,
	}
}
