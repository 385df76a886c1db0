package leg

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/recipes"
	"sweep/recipes/schema"
)

// autoLenEscape lets "--max-model-len auto" through the vLLM schema, which
// types the flag int although vLLM reads "auto" (fit to memory) there.
var autoLenEscape = schema.Escape{Flag: "--max-model-len", Values: []string{"auto"},
	Reason: "vLLM reads auto for --max-model-len (fit the context to memory); the schema types the flag int"}

// GPU is the leg's accelerator: its gpu key, else the runner label's
// leading GPU name ("cluster:mi325x-amds" → mi325x).
func GPU(l *configs.ABLeg) string {
	if l.GPU != "" {
		return l.GPU
	}
	return configs.GPUOfRunner(l.Runner)
}

// deviceVar is the variable that hands an engine its GPUs: HIP's on AMD
// Instinct (ROCm's vLLM and SGLang read it; ROCR_VISIBLE_DEVICES as well
// would filter the devices twice), CUDA's elsewhere.
func deviceVar(gpu string) string {
	if strings.HasPrefix(gpu, "mi") {
		return "HIP_VISIBLE_DEVICES"
	}
	return "CUDA_VISIBLE_DEVICES"
}

// planDirect plans an arm declared by its engine (configs.ABArm.Engine)
// rather than by a config key: the engine command is built from the arm's
// keys and checked against the engine's flag schema, as launch_arm.sh
// starts it (vllm serve; vLLM's gRPC worker, with no parser flags, behind
// the router; SGLang's launch_server), on the arm's GPUs.
func planDirect(l *configs.ABLeg, a configs.ABArm, o PlanOptions, port func() (int, error), gpu string) (Arm, error) {
	kind, ok := configs.ServeKindFor(a.Engine)
	if !ok {
		return Arm{}, armError(a, ".engine", "%q: want one of %s", a.Engine, strings.Join(configs.ServeKindNames(), ", "))
	}
	if kind.GRPC {
		if a.Router == nil {
			return Arm{}, armError(a, ".engine", "%s is %s's gRPC worker, which answers no HTTP: declare the router in front of it (router: {argv: [python3, -m, smg.launch_router], ...})", kind.Name, kind.Engine.Facts().Display)
		}
		if a.Parsers.ToolCall != nil || a.Parsers.Reasoning != nil {
			return Arm{}, armError(a, ".parsers", "%s's gRPC worker takes no parser flags (the router owns the chat template and parsing): put them under router.parsers", kind.Engine.Facts().Display)
		}
	}
	public, enginePort, err := armPorts(a, port)
	if err != nil {
		return Arm{}, err
	}
	ep := strconv.Itoa(enginePort)
	tool := kind.Engine
	argv := kind.Argv(a.ModelPath, a.ServedModel, enginePort, a.TP, a.MaxModelLen)
	if a.GPUMemoryUtil > 0 {
		argv = append(argv, tool.Facts().MemFractionFlag, strconv.FormatFloat(a.GPUMemoryUtil, 'g', -1, 64))
	}
	argv = append(argv, a.Args...)
	argv = applyParsers(argv, a.Parsers, tool.Facts().AutoToolChoiceFlag)
	var escapes []schema.Escape
	if f, _ := schema.ReadArgv(argv, schema.ArgvOptions{Schema: schema.OfProgram(argv)}).Find("--max-model-len"); f.Value() == "auto" {
		escapes = append(escapes, autoLenEscape)
	}
	if err := checkEngine(a, tool, "", argv, escapes); err != nil {
		return Arm{}, err
	}
	devices := make([]string, len(a.GPUs))
	for i, g := range a.GPUs {
		devices[i] = strconv.Itoa(g)
	}
	env := map[string]string{deviceVar(gpu): strings.Join(devices, ",")}
	for k, v := range a.Env {
		env[k] = v
	}
	pt := recipes.Point{
		Row: matrix.Row{Kind: matrix.AgenticSingleNode, Image: a.Image, Model: a.ModelPath, Framework: tool,
			Runner: l.Runner, Parallelism: configs.Parallelism{TP: a.TP, EP: 1, PP: 1}},
		Recipe:      "ab-" + a.Engine,
		Engine:      recipes.Command{Argv: argv, Env: env},
		CommandFile: string(tool) + "_command.txt",
		Port:        public,
		EnginePort:  enginePort,
		ResultDir:   ServerDir(o.Dir, a.Label),
		Escapes:     escapes,
	}
	if kind.GRPC {
		pt.HealthURL = "tcp://127.0.0.1:" + ep
	} else {
		pt.HealthURL = "http://127.0.0.1:" + ep + "/health"
	}
	if a.Router != nil {
		scheme := "http"
		if kind.GRPC {
			scheme = "grpc"
		}
		pt.Router, pt.RouterHealthURL = routerCommand(a.Router, scheme+"://127.0.0.1:"+ep, public, o.Simulate)
		pt.Router.Env = maps.Clone(env)
		if err := checkRouter(a, pt.Router.Argv); err != nil {
			return Arm{}, err
		}
	}
	name := a.Name
	if name == "" {
		name = a.Label
	}
	return Arm{Label: a.Label, Name: name, Point: pt, BaseURL: "http://127.0.0.1:" + strconv.Itoa(public) + "/v1"}, nil
}

// routerCommand is the router in front of an arm: its launcher with the
// worker URL, loopback host, public port and a Prometheus port of its own
// (SMG's default 29000 collides when two gateways share a host), its
// parsers, then its args; and its readiness URL (the simulated router
// answers only /health).
func routerCommand(r *configs.ABRouter, worker string, public int, simulate bool) (*recipes.Command, string) {
	argv := slices.Clone(r.Argv)
	argv = append(argv, "--worker-urls", worker, "--host", "127.0.0.1", "--port", strconv.Itoa(public),
		"--prometheus-port", strconv.Itoa(recipes.RouterMetricsPort(public)))
	argv = applyParsers(argv, r.Parsers, "")
	argv = append(argv, r.Args...)
	health := r.Health
	if simulate {
		health = "/health"
	}
	return &recipes.Command{Argv: argv, Env: map[string]string{}}, "http://127.0.0.1:" + strconv.Itoa(public) + health
}
