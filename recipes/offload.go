package recipes

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// OffloadArgs expands the offload flags of the row's backend (nothing on
// rows without offload).
var OffloadArgs = Arg{Name: "<offload>", Expand: offloadArgs}

func offloadArgs(c *Ctx, r *Recipe) ([]Arg, error) {
	o, err := r.offloadFor(c)
	if o == nil || err != nil {
		return nil, err
	}
	return o.Args(c)
}

// offloadFor returns the recipe's backend for the row: nil without offload,
// an error for a backend the recipe does not support.
func (r *Recipe) offloadFor(c *Ctx) (*Offload, error) {
	if !c.Offloaded() {
		if b := c.Backend(); b != "" {
			return nil, fmt.Errorf("kv-offloading %q with backend %q: a backend needs kv-offloading dram", c.Row.KVOffloading, b)
		}
		return nil, nil
	}
	if c.Row.KVOffloading != "dram" {
		return nil, fmt.Errorf("kv-offloading %q: want none or dram", c.Row.KVOffloading)
	}
	if c.TotalCPUDRAMGB() < 1 {
		return nil, fmt.Errorf("kv-offloading dram needs total-cpu-dram-gb >= 1, got %d", c.TotalCPUDRAMGB())
	}
	var names []string
	for i := range r.Offload {
		if r.Offload[i].Backend == c.Backend() {
			return &r.Offload[i], nil
		}
		names = append(names, r.Offload[i].Backend)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("kv offload backend %q: the recipe runs GPU-resident KV only", c.Backend())
	}
	return nil, fmt.Errorf("kv offload backend %q: the recipe supports %s", c.Backend(), strings.Join(names, ", "))
}

// HiCacheRatio is SGLang HiCache with the host pool sized relative to the
// device pool (--hicache-ratio); the DRAM budget is not consumed (GLM-5.2
// FP4, DSv4 on MI355X).
func HiCacheRatio(ratio func(*Ctx) float64) Offload {
	return Offload{Backend: "hicache", Args: func(c *Ctx) ([]Arg, error) {
		return []Arg{
			Flag("--enable-hierarchical-cache", nil),
			Flag("--hicache-ratio", ratio(c)),
			Flag("--hicache-write-policy", "write_through"),
			Flag("--hicache-io-backend", "direct"),
			Flag("--hicache-mem-layout", "page_first_direct"),
		}, nil
	}}
}

// HiCacheSized is SGLang HiCache with an explicit per-rank host pool in GB
// (--hicache-size) from the DRAM budget, 64-token pages, kernel IO and
// selective write-through (B300, H200).
func HiCacheSized(size func(*Ctx) (int, error)) Offload {
	return Offload{Backend: "hicache", Args: func(c *Ctx) ([]Arg, error) {
		gb, err := size(c)
		if err != nil {
			return nil, err
		}
		return []Arg{
			Flag("--page-size", 64),
			Flag("--enable-hierarchical-cache", nil),
			Flag("--hicache-size", gb),
			Flag("--hicache-io-backend", "kernel"),
			Flag("--hicache-mem-layout", "page_first"),
			Flag("--hicache-write-policy", "write_through_selective"),
		}, nil
	}}
}

// HiCacheSizeReserving sizes the host pool as InferenceX's B300 recipe
// does: reserve 1 GB per rank, then (budget-TP)·15/31 split over TP ranks
// (SGLang allocates about 31/15 of the nominal size per rank).
func HiCacheSizeReserving(c *Ctx) (int, error) {
	total, tp := c.TotalCPUDRAMGB(), c.TP
	usable := total - tp
	if usable < 1 {
		return 0, fmt.Errorf("hicache: total-cpu-dram-gb %d leaves nothing after reserving %d GB", total, tp)
	}
	size := usable * 15 / tp / 31
	if size < 1 {
		return 0, fmt.Errorf("hicache: total-cpu-dram-gb %d gives a host pool below 1 GB per rank", total)
	}
	if projected := (size*tp*31+14)/15 + tp; projected > total {
		return 0, fmt.Errorf("hicache: projected host use %d GB exceeds total-cpu-dram-gb %d", projected, total)
	}
	return size, nil
}

// HiCacheSizePerPool sizes the host pool as budget / TP / pools (H200: two
// host pools per rank).
func HiCacheSizePerPool(pools int) func(*Ctx) (int, error) {
	return func(c *Ctx) (int, error) {
		size := c.TotalCPUDRAMGB() / c.TP / pools
		if size < 1 {
			return 0, fmt.Errorf("hicache: total-cpu-dram-gb %d gives a host pool below 1 GB per rank", c.TotalCPUDRAMGB())
		}
		return size, nil
	}
}

// VLLMSimpleCPU is vLLM's SimpleCPUOffloadConnector with the DRAM budget
// split evenly over TP ranks (bytes, decimal GB).
func VLLMSimpleCPU(env ...EnvVar) Offload {
	return Offload{Backend: "vllm-simple", Env: env, Args: func(c *Ctx) ([]Arg, error) {
		perRank := int64(c.TotalCPUDRAMGB()) * 1_000_000_000 / int64(c.TP)
		return []Arg{Flag("--kv-transfer-config", KVTransferConfig{
			Connector: "SimpleCPUOffloadConnector", Role: "kv_both",
			Extra: map[string]any{"cpu_bytes_to_use_per_rank": perRank, "lazy_offload": false},
		})}, nil
	}}
}

// LMCache is vLLM's LMCache multi-process connector: one LMCache server per
// TP rank (ports 5555+i, HTTP 8080+i), each with budget/TP GB of L1.
func LMCache() Offload {
	return Offload{
		Backend: "lmcache",
		Args: func(c *Ctx) ([]Arg, error) {
			if c.TotalCPUDRAMGB()/c.TP < 1 {
				return nil, fmt.Errorf("lmcache: total-cpu-dram-gb %d gives shards below 1 GB", c.TotalCPUDRAMGB())
			}
			urls := make([]string, c.TP)
			for i := range urls {
				urls[i] = "tcp://127.0.0.1:" + strconv.Itoa(5555+i)
			}
			return []Arg{Flag("--kv-transfer-config", KVTransferConfig{
				Connector: "LMCacheMPConnector", ModulePath: "lmcache.integration.vllm.lmcache_mp_connector", Role: "kv_both",
				Extra: lmcacheMPExtra{ServerURLs: strings.Join(urls, ","), MQTimeout: "6000.0"},
			})}, nil
		},
		Sidecars: func(c *Ctx) []Sidecar {
			shard := strconv.Itoa(c.TotalCPUDRAMGB() / c.TP)
			out := make([]Sidecar, c.TP)
			for i := range out {
				port, http := strconv.Itoa(5555+i), strconv.Itoa(8080+i)
				out[i] = Sidecar{
					Name: "lmcache-" + strconv.Itoa(i),
					Command: Command{Argv: []string{"lmcache", "server", "--host", "127.0.0.1", "--port", port,
						"--http-host", "127.0.0.1", "--http-port", http,
						"--l1-size-gb", shard, "--l1-init-size-gb", "10", "--l1-read-ttl-seconds", "7200",
						"--chunk-size", "256", "--max-workers", "2", "--eviction-policy", "LRU",
						"--supported-transfer-mode", "lmcache_driven"}},
					HealthURL: "http://127.0.0.1:" + http + "/healthcheck",
				}
			}
			return out
		},
	}
}

// KVTransferConfig is vLLM's --kv-transfer-config object, its keys in
// InferenceX's order. Extra is a map or a struct that keeps the key order
// and number literals of InferenceX's JSON (lmcacheMPExtra).
type KVTransferConfig struct {
	Connector  string `json:"kv_connector"`
	ModulePath string `json:"kv_connector_module_path,omitempty"`
	Role       string `json:"kv_role"`
	// LoadFailurePolicy is kv_load_failure_policy ("recompute").
	LoadFailurePolicy string `json:"kv_load_failure_policy,omitempty"`
	Extra             any    `json:"kv_connector_extra_config,omitempty"`
}

// lmcacheMPExtra is the LMCacheMPConnector's extra config as InferenceX
// writes it: server URLs first, and the timeout as the literal 6000.0
// (json.Number keeps the form; a float64 would print 6000).
type lmcacheMPExtra struct {
	ServerURLs string      `json:"lmcache.mp.server_urls"`
	MQTimeout  json.Number `json:"lmcache.mp.mq_timeout"`
}

// MooncakeOptions size and tune the embedded Mooncake store of a recipe.
type MooncakeOptions struct {
	// PerRankGB is the global segment per TP rank in GB; a result <= 0 is
	// a plan error (the budget is too small).
	PerRankGB func(*Ctx) int
	// DeviceName is the config's RDMA device_name ("" for Mooncake's
	// choice).
	DeviceName string
	// HighWatermark is mooncake_master's eviction_high_watermark_ratio.
	HighWatermark string
	// Transfer is the --kv-transfer-config object.
	Transfer any
	// Env is exported besides MOONCAKE_CONFIG_PATH.
	Env []EnvVar
}

// Mooncake is vLLM's MooncakeStoreConnector with an embedded Mooncake
// store: a mooncake_master on port+12000 and a per-rank global segment with
// a 4 GB local buffer in $RESULT_DIR/mooncake_config.json.
func Mooncake(o MooncakeOptions) Offload {
	cfgPath := func(c *Ctx) string { return strings.TrimSuffix(c.ResultDir, "/") + "/mooncake_config.json" }
	size := func(c *Ctx) (int, error) {
		n := o.PerRankGB(c)
		if n <= 0 {
			return 0, fmt.Errorf("mooncake: total-cpu-dram-gb %d is too small for the checkpoint cache and KV offload", c.TotalCPUDRAMGB())
		}
		return n, nil
	}
	return Offload{
		Backend: "mooncake",
		Args: func(c *Ctx) ([]Arg, error) {
			if _, err := size(c); err != nil {
				return nil, err
			}
			return []Arg{Flag("--kv-transfer-config", o.Transfer)}, nil
		},
		Env: append([]EnvVar{EnvFn("MOONCAKE_CONFIG_PATH", cfgPath)}, o.Env...),
		Sidecars: func(c *Ctx) []Sidecar {
			n, _ := size(c) // Args reported the error
			port := strconv.Itoa(MooncakeMasterPort(c.Port))
			cfg := fmt.Sprintf(`{
  "mode": "embedded",
  "metadata_server": "P2PHANDSHAKE",
  "master_server_address": "127.0.0.1:%s",
  "global_segment_size": "%dGB",
  "local_buffer_size": "4GB",
  "protocol": "rdma",
  "device_name": %q,
  "enable_offload": false
}
`, port, n, o.DeviceName)
			return []Sidecar{{
				Name:    "mooncake-master",
				Command: Command{Argv: []string{"mooncake_master", "--port", port, "--eviction_high_watermark_ratio=" + o.HighWatermark, "--eviction_ratio=0.10"}},
				Files:   []File{{Path: cfgPath(c), Content: cfg}},
			}}
		},
	}
}
