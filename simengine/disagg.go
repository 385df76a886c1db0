package simengine

import "sync"

// Disaggregation modes (Config.Disagg).
const (
	DisaggPrefill = "prefill"
	DisaggDecode  = "decode"
)

// kvLinkBytesPerSec is one GPU's share of the prefill→decode KV transfer:
// 400 Gb/s at 80 % goodput. InferenceX's AMD disaggregated job
// (benchmarks/multi_node/amd_utils, 843c6254f) gives each worker the
// node's eight RDMA devices (--disaggregation-ib-device rdma0,...,rdma7),
// one NIC per MI355X GPU, and AMD rates that NIC (Pensando Pollara 400)
// at 400 Gbps (amd.com/en/products/network-interface-cards/pensando.html).
// The 80 % is an assumption for large RDMA writes, not a measurement.
const kvLinkBytesPerSec = 400e9 / 8 * 0.8

// kvTransferSetup is the fixed cost of one transfer (the bootstrap
// handshake between the two workers and the transfer's completion
// notice), an assumption of the same order as one decode step.
const kvTransferSetup = 2e-3

// kvLink is a decode worker's inbound KV link: its GPUs' NICs, one
// transfer at a time (a transfer uses every GPU's NIC for its KV shard),
// so transfers queue behind each other at high concurrency.
type kvLink struct {
	mu   sync.Mutex
	free float64 // simulated time the link is next free
}

// reserve books a transfer of bytes over gpus links starting no earlier
// than now and returns when it ends (simulated seconds).
func (l *kvLink) reserve(now, bytes float64, gpus int) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	start := max(now, l.free)
	l.free = start + kvTransferSetup + bytes/(kvLinkBytesPerSec*float64(max(gpus, 1)))
	return l.free
}
