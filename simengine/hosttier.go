package simengine

import (
	"fmt"

	"sweep/configs"
	"sweep/internal/simproto"
)

// hostTierLog is what the engine's log says of c's host KV tier (none
// without one): where it comes from (HostKV.Source), its tokens per rank
// and what they add to the device pool, capa's (a write-through tier
// keeps a copy of the device's blocks, so one no larger than the device
// pool adds nothing: the engine runs as the resident one); then a warning
// for a size beyond reason, which the real engine would take as given (a
// refusal is the engine's, never the log's): below one block, or more
// host memory than a node of c's runner (else the largest of c's GPU)
// gives to KV offload (nodeDRAM).
func hostTierLog(c Config, capa capacity) []string {
	h := c.HostKV
	if !h.Enabled() {
		return nil
	}
	source := h.Source
	if source == "" {
		source = "host memory"
	}
	policy := "write-through"
	if h.WriteBack {
		policy = "write-back"
	}
	var what string
	switch {
	case h.WriteBack:
		what = "all beyond the device pool"
	case capa.hostTokens > 0:
		what = fmt.Sprintf("%d beyond the device pool's %d (a write-through tier copies the device's blocks)", capa.hostTokens, capa.poolTokens)
	default:
		what = fmt.Sprintf("within the device pool's %d: a write-through tier copies the device's blocks, so it adds nothing", capa.poolTokens)
	}
	out := []string{fmt.Sprintf("host KV tier (%s, %s): %d tokens per rank, %s", source, policy, capa.hostTier, what)}
	if capa.hostTier < c.PageSize {
		out = append(out, fmt.Sprintf("warning: host KV tier of %d tokens per rank is less than one block (page size %d): it holds nothing", capa.hostTier, c.PageSize))
	}
	if node := nodeDRAM(c.GPU, c.Runner); node.bytes > 0 {
		gpus := c.GPUs()
		perGPU := hostBytesPerGPU(c)
		onNode := perGPU * float64(min(gpus, node.gpus))
		if onNode > node.bytes {
			out = append(out, fmt.Sprintf("warning: host KV tier takes %s of host memory on a node (%s a GPU), above the %s %s: a real node could not hold it",
				gibText(onNode), gibText(perGPU), gibText(node.bytes), node.whose(c)))
		}
	}
	return out
}

// hostBytesPerGPU is the host memory c's tier takes per GPU, 0 where its
// size is a ratio of the device pool (SGLang's --hicache-ratio).
func hostBytesPerGPU(c Config) float64 {
	switch h := c.HostKV; {
	case h.BytesPerWorker > 0:
		return h.BytesPerWorker
	case h.Bytes > 0:
		// Each data-parallel engine takes all of it over its TP × PP
		// workers.
		return h.Bytes / float64(max(c.TP, 1)*max(c.PP, 1))
	}
	return 0
}

// nodeHost is the host memory a node gives to KV offload and its GPUs,
// with the runner label whose hardware entry says so and whether that
// is the engine's own runner (else the largest of its GPU's).
type nodeHost struct {
	bytes float64
	gpus  int
	label string
	own   bool
}

// nodeDRAM is the CPU DRAM a node gives to KV offload by the hardware of
// InferenceX's runners (configs.DefaultRunners: available-cpu-dram-mib):
// the engine's runner's when runner is a label of gpu with an entry (a
// label's GPU is GPUFromRunner's), else the most among gpu's labels;
// zero when no runner of gpu says.
func nodeDRAM(gpu, runner string) nodeHost {
	runners, err := configs.DefaultRunners()
	if err != nil || gpu == "" {
		return nodeHost{}
	}
	of := func(l string) nodeHost {
		hw := runners.Hardware[l]
		return nodeHost{bytes: float64(hw.AvailableCPUDRAMMiB) * (1 << 20), gpus: max(hw.GPUsPerNode, 1), label: l}
	}
	if own := of(runner); runner != "" && GPUFromRunner(runner) == gpu && own.bytes > 0 {
		own.own = true
		return own
	}
	var best nodeHost
	for _, l := range runners.HardwareOrder {
		if n := of(l); GPUFromRunner(l) == gpu && n.bytes > best.bytes {
			best = n
		}
	}
	return best
}

// whose says whose node n is, for c's warning: "a node of its runner
// gives ... (LABEL)", or the largest of c's GPU and why its own runner's
// is not used.
func (n nodeHost) whose(c Config) string {
	if n.own {
		return fmt.Sprintf("a node of its runner %s gives to KV offload (available-cpu-dram-mib of %s in configs/runners.yaml)", n.label, n.label)
	}
	why := fmt.Sprintf("the engine was not told its runner (%s)", simproto.EnvRunner)
	if c.Runner != "" {
		why = fmt.Sprintf("its runner %s has no %s node under hardware there", c.Runner, c.GPU)
	}
	return fmt.Sprintf("a %s node gives to KV offload at most (available-cpu-dram-mib of %s, the largest of %s's runners in configs/runners.yaml; %s)", c.GPU, n.label, c.GPU, why)
}

// gibText is bytes in GiB for the log: whole GiB from 10 on.
func gibText(bytes float64) string {
	if g := bytes / gib; g < 10 {
		return fmt.Sprintf("%.3g GiB", g)
	}
	return fmt.Sprintf("%.0f GiB", bytes/gib)
}
