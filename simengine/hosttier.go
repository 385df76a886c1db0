package simengine

import (
	"fmt"

	"sweep/configs"
)

// hostTierLog is what the engine's log says of c's host KV tier (none
// without one): where it comes from (HostKV.Source), its tokens per rank
// and what they add to the device pool, capa's (a write-through tier
// keeps a copy of the device's blocks, so one no larger than the device
// pool adds nothing: the engine runs as the resident one); then a warning
// for a size beyond reason, which the real engine would take as given (a
// refusal is the engine's, never the log's): below one block, or more
// host memory than a node of c's GPU gives to KV offload (nodeDRAM).
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
	if node, label := nodeDRAM(c.GPU); node.bytes > 0 {
		gpus := c.GPUs()
		perGPU := hostBytesPerGPU(c)
		onNode := perGPU * float64(min(gpus, node.gpus))
		if onNode > node.bytes {
			out = append(out, fmt.Sprintf("warning: host KV tier takes %s of host memory on a node (%s a GPU), above the %s a %s node gives to KV offload (available-cpu-dram-mib of %s in configs/runners.yaml): a real node could not hold it",
				gibText(onNode), gibText(perGPU), gibText(node.bytes), c.GPU, label))
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

// nodeHost is the host memory a node gives to KV offload and its GPUs.
type nodeHost struct {
	bytes float64
	gpus  int
}

// nodeDRAM is the most CPU DRAM a node of gpu gives to KV offload among
// the hardware of InferenceX's runners (configs.DefaultRunners:
// available-cpu-dram-mib, the label whose GPU is gpu, GPUFromRunner), with
// that label; zero when no runner of gpu says.
func nodeDRAM(gpu string) (nodeHost, string) {
	runners, err := configs.DefaultRunners()
	if err != nil || gpu == "" {
		return nodeHost{}, ""
	}
	var best nodeHost
	var label string
	for _, l := range runners.HardwareOrder {
		hw := runners.Hardware[l]
		if GPUFromRunner(l) != gpu || hw.AvailableCPUDRAMMiB <= 0 {
			continue
		}
		if b := float64(hw.AvailableCPUDRAMMiB) * (1 << 20); b > best.bytes {
			best, label = nodeHost{bytes: b, gpus: max(hw.GPUsPerNode, 1)}, l
		}
	}
	return best, label
}

// gibText is bytes in GiB for the log: whole GiB from 10 on.
func gibText(bytes float64) string {
	if g := bytes / gib; g < 10 {
		return fmt.Sprintf("%.3g GiB", g)
	}
	return fmt.Sprintf("%.0f GiB", bytes/gib)
}
