package recipes

import (
	"strings"

	"sweep/configs"
	"sweep/configs/matrix"
)

// NVIDIA multi-node points follow the srt-slurm branches of
// launch_gb200-nv.sh, launch_gb300-nv.sh, launch_h200-dgxc-slurm.sh,
// launch_b200-dgxc.sh and launch_b200-nscale-slurm.sh at LauncherCommit: the launcher clones srt-slurm at a
// ref chosen by (framework, model prefix, precision), copies InferenceX's
// recipes from benchmarks/multi_node/srt-slurm-recipes/ over the checkout,
// and submits the row's CONFIG_FILE (a prefill additional-setting) with
// `srtctl apply`, reading "Job <id>" back; logs land in outputs/<id>/logs/.
// srtctl renders the workers' engine commands and the Dynamo frontend from
// the recipe's backend blocks, so sweep plans the roles and the submission,
// not those argv.

const (
	nvidiaSrtSlurm = "https://github.com/NVIDIA/srt-slurm.git"
	cquilSrtSlurm  = "https://github.com/cquil11/srt-slurm-nv.git"
	fstackSrtSlurm = "https://github.com/functionstackx/srt-slurm-nv.git"
	// srtRecipes is InferenceX's recipe tree the launchers overlay.
	srtRecipes = "benchmarks/multi_node/srt-slurm-recipes/"
)

// srtRule is one agentic branch of a launcher's checkout if-chain; empty
// fields match anything. Rules are tried in the launcher's order.
type srtRule struct {
	framework         configs.Engine
	prefix, precision string
	src               SrtSlurmSource
}

func srt(repo, ref, overlay string) SrtSlurmSource {
	return SrtSlurmSource{Repo: repo, Ref: ref, Overlay: overlay}
}

// srtLaunchers are the agentic srt-slurm launchers: GPUs per node (the
// srtslurm.yaml they write) and the checkout rules of their agentic branches.
var srtLaunchers = map[string]struct {
	gpusPerNode int
	rules       []srtRule
}{
	"gb200-nv": {4, []srtRule{
		{configs.DynamoSGLang, "glm5.2", "fp4", srt(nvidiaSrtSlurm, "v1.0.50", srtRecipes+"sglang/glm5.2/gb200-fp4/agentic")},
		{configs.DynamoVLLM, "minimaxm3", "fp4", srt(nvidiaSrtSlurm, "v1.0.50", srtRecipes+"vllm/minimax-m3/gb200-fp4/agentic")},
		{configs.DynamoSGLang, "qwen3.5", "fp4", srt(nvidiaSrtSlurm, "v1.0.45", srtRecipes+"sglang/qwen3.5/gb200-fp4/agentic")},
		{configs.DynamoVLLM, "dsv4", "fp4", srt(nvidiaSrtSlurm, "v1.0.45", srtRecipes+"vllm/deepseek-v4/agentic")},
		{"", "kimik3", "", srt(nvidiaSrtSlurm, "v1.0.53", srtRecipes+"vllm/kimi-k3/agentic")},
		{"", "", "", srt(cquilSrtSlurm, "de59739b172e507e15ebf145bfe305f606e82fbf", srtRecipes+"vllm/deepseek-v4/agentic")},
	}},
	"gb300-nv": {4, []srtRule{
		{configs.DynamoTRT, "qwen3.5", "", srt(nvidiaSrtSlurm, "v1.0.50", srtRecipes+"trtllm/qwen3.5/gb300-fp4/disagg/agentx")},
		{configs.DynamoTRT, "glm5.2", "", srt(nvidiaSrtSlurm, "v1.0.38", srtRecipes+"trtllm/glm5.2")},
		{configs.DynamoSGLang, "qwen3.5", "", srt(nvidiaSrtSlurm, "v1.0.38", srtRecipes+"sglang/qwen3.5")},
		{configs.DynamoSGLang, "dsv4", "", srt(nvidiaSrtSlurm, "v1.0.38", srtRecipes+"sglang/deepseek-v4/agentic")},
		{configs.DynamoTRT, "dsv4", "", srt(nvidiaSrtSlurm, "v1.0.50", srtRecipes+"trtllm/deepseek-v4")},
		{configs.DynamoSGLang, "glm5.2", "", srt(nvidiaSrtSlurm, "main", srtRecipes+"sglang/glm5.2/gb300-fp4")},
		{"", "", "", srt(nvidiaSrtSlurm, "v1.0.36", srtRecipes+"vllm/{deepseek-v4,minimax-m3,kimi-k3}/agentic")},
	}},
	"h200-dgxc-slurm": {8, []srtRule{
		{configs.DynamoSGLang, "glm5.2", "", srt(nvidiaSrtSlurm, "v1.0.44", "")},
		{configs.VLLM, "kimik3", "", srt(fstackSrtSlurm, "df5baa93f4caf5169dea2a4236ad2cc742fe40e7", srtRecipes+"vllm/kimi-k3/agentic")},
		{configs.DynamoSGLang, "dsv4", "", srt(nvidiaSrtSlurm, "v1.0.38", srtRecipes+"sglang/deepseek-v4/agentic/agg-h200-tp8-mtp-kvoffload.yaml")},
		{"", "", "", srt(cquilSrtSlurm, "cam/sa-submission-q2-2026", "")},
	}},
	"b200-nscale-slurm": {8, []srtRule{
		{"", "kimik3", "", srt(nvidiaSrtSlurm, "217f9438", srtRecipes+"vllm/kimi-k3/agentic")},
	}},
	"b200-dgxc": {8, []srtRule{
		{"", "kimik3", "", srt(fstackSrtSlurm, "df5baa93f4caf5169dea2a4236ad2cc742fe40e7", srtRecipes+"vllm/kimi-k3/agentic")},
	}},
}

// srtSource returns the checkout a launcher uses for an agentic row.
func srtSource(launcher string, r *matrix.Row) (SrtSlurmSource, int, bool) {
	l, ok := srtLaunchers[launcher]
	if !ok {
		return SrtSlurmSource{}, 0, false
	}
	for _, rule := range l.rules {
		if (rule.framework == "" || rule.framework == r.Framework) && (rule.prefix == "" || rule.prefix == r.ModelPrefix) &&
			(rule.precision == "" || rule.precision == r.Precision) {
			return rule.src, l.gpusPerNode, true
		}
	}
	return SrtSlurmSource{}, 0, false
}

// srtctlApply is the launcher's srtctl apply argv and environment.
// ${DATE} is the submission date (date +%Y%m%d); ISL and OSL are unset on
// agentic rows, so the workload tag is a bare "x" where the launcher writes
// ${ISL}x${OSL}.
func srtctlApply(launcher, runner, config string, r *matrix.Row) *HostCommand {
	gpu, _, _ := strings.Cut(launcher, "-")
	tags := func(workload string) string {
		return strings.Join([]string{gpu, r.ModelPrefix, r.Precision, workload, "infmax-${DATE}"}, ",")
	}
	cmd := &HostCommand{Role: "submit", StdoutTo: []string{"grep", "-oP", `Job \K[0-9]+`}}
	switch launcher {
	case "gb200-nv":
		cmd.Argv = []string{"srtctl", "apply", "--no-preflight", "-f", config, "--tags", tags("x")}
		if r.Framework == "dynamo-sglang" {
			cmd.Argv = append(cmd.Argv, "--setup-script", "install-torchao.sh")
		}
		cmd.Env = map[string]string{"RUNNER_NAME": "inferencex-" + runner}
	case "gb300-nv":
		cmd.Argv = []string{"srtctl", "apply", "-f", config, "--tags", tags("x"), "--no-preflight"}
	case "h200-dgxc-slurm":
		cmd.Argv = []string{"srtctl", "apply", "-f", config, "--tags", tags("agentic")}
	case "b200-nscale-slurm":
		cmd.Argv = []string{"srtctl", "apply", "-f", config}
		if r.ModelPrefix == "kimik2.6" || r.ModelPrefix == "kimik3" || r.ModelPrefix == "dsv4" && r.Framework == "dynamo-sglang" {
			cmd.Argv = append(cmd.Argv, "--no-preflight")
		}
		cmd.Argv = append(cmd.Argv, "--tags", tags("x"))
	default:
		cmd.Argv = []string{"srtctl", "apply", "-f", config, "--tags", tags("x")}
	}
	return cmd
}

func planSrtSlurm(p *MultiNodePoint, runner string) error {
	r := &p.Row
	config := settings(r.Prefill)["CONFIG_FILE"]
	if config == "" {
		return notSupported("framework %s on %s: the row has no CONFIG_FILE prefill setting, and the srt-slurm path submits nothing without one", r.Framework, p.Launcher)
	}
	src, gpn, ok := srtSource(p.Launcher, r)
	if !ok {
		return notSupported("framework %s, model %s on runner %s: launch_%s.sh has no agentic srt-slurm branch sweep knows", r.Framework, r.ModelPrefix, runner, p.Launcher)
	}
	p.Submitter, p.Recipe, p.SrtSlurm = "srtctl", config, &src
	p.Submit = srtctlApply(p.Launcher, runner, config, r)
	path, _, _ := strings.Cut(config, ":")
	// The launcher copies InferenceX's recipes to recipes/... of the
	// checkout, or (some TRT-LLM keys) to the same path as in InferenceX.
	from := path
	if !strings.HasPrefix(path, srtRecipes) {
		from = srtRecipes + strings.TrimPrefix(path, "recipes/")
	}
	p.Files = map[string]string{
		path:            "the recipe (" + from + " copied over the checkout; job name set to the runner's)",
		"srtslurm.yaml": "srtctl's site file the launcher writes (account, partition, gpus_per_node, model path alias, containers)",
	}
	if set := settings(r.Prefill); set["SYNTHETIC_ACCEPTANCE"] == "true" {
		p.Files[path] += "; runners/inject_synthetic_acceptance.py sets the speculative acceptance length " + set["SYNTHETIC_ACCEPTANCE_LENGTH"]
	}
	rendered := "srtctl at " + src.Ref + " from " + path
	// A worker spans ceil(GPUs/node) nodes; workers smaller than a node
	// share the role's nodes, as srtctl places them (<role>_nodes ×
	// gpus_per_node ≥ workers × gpus_per_<role>).
	workers := func(role Role, w *matrix.Worker) RolePlan {
		g, total := w.GPUs(), w.NumWorker*w.GPUs()
		rp := RolePlan{Role: role, Workers: w.NumWorker, NodesPerWorker: ceilDiv(g, gpn), GPUs: total,
			Parallelism: &w.Parallelism, RenderedBy: rendered}
		rp.Nodes, rp.GPUsPerNode = rp.NodesPerWorker*w.NumWorker, min(g, gpn)
		if g < gpn {
			rp.Nodes, rp.GPUsPerNode = ceilDiv(total, gpn), min(total, gpn)
		}
		return rp
	}
	frontend := "frontend"
	if r.Router != nil {
		frontend = r.Router.Name + " " + r.Router.Version
	}
	if r.Disagg {
		p.Roles = []RolePlan{workers(RolePrefill, r.Prefill), workers(RoleDecode, r.Decode)}
	} else {
		p.Roles = []RolePlan{workers(RoleWorker, r.Prefill)}
	}
	p.Roles = append(p.Roles,
		RolePlan{Role: RoleRouter, Workers: 1, Placement: "head node (" + frontend + ")", RenderedBy: rendered},
		RolePlan{Role: RoleClient, Workers: 1, Placement: "head node", RenderedBy: rendered + " (custom benchmark: benchmarks/multi_node/agentic_srt.sh)"})
	return nil
}
