package recipes

// Command is one process of a point: argv (the program first, as InferenceX
// runs it) and its environment.
//
// Env is the environment InferenceX gives the process beyond the runner's
// own: workflow settings, benchmark_lib exports and the recipe's exports.
// Left out are launcher site paths (HF cache mounts, the MI355X aiperf mmap
// cache, VLLM_CACHE_ROOT) and the Bash-only knobs sweep resolves at plan
// time (MODEL_PATH, EVAL_FRAMEWORK, WEKA_LOADER_OVERRIDE, GPU_METRICS_CSV).
// Unset names variables removed from the inherited environment; EnvFrom
// copies one variable to another at run time when the source is set
// (HIP_VISIBLE_DEVICES from ROCR_VISIBLE_DEVICES). Placeholders lists the
// ${NAME} tokens in Argv or Env that the runner fills in at run time.
type Command struct {
	Argv         []string          `json:"argv"`
	Env          map[string]string `json:"env"`
	Unset        []string          `json:"unset,omitempty"`
	EnvFrom      map[string]string `json:"env_from,omitempty"`
	Placeholders []string          `json:"placeholders,omitempty"`
}

// Sidecar is a helper process of a point (an LMCache shard server, the
// Mooncake master). Files are written before it starts. HealthURL is ""
// for a sidecar without a readiness endpoint (the Mooncake master, which
// InferenceX only checks is alive after 2 s).
type Sidecar struct {
	Name      string  `json:"name"`
	Command   Command `json:"command"`
	HealthURL string  `json:"health_url"`
	Files     []File  `json:"files,omitempty"`
}

// File is a file a point writes before a process starts (a config file).
type File struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}
