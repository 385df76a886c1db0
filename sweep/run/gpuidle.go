package run

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// GPUProbe reports the memory use of each visible GPU in percent. ok is
// false when the platform has no tool to ask (no rocm-smi or nvidia-smi).
type GPUProbe func(ctx context.Context) (usage []float64, ok bool, err error)

// SystemGPUProbe asks rocm-smi, then nvidia-smi, whichever is installed.
func SystemGPUProbe(ctx context.Context) ([]float64, bool, error) {
	if path, err := exec.LookPath("rocm-smi"); err == nil {
		out, err := exec.CommandContext(ctx, path, "--showmemuse", "--json").Output()
		if err != nil {
			return nil, true, fmt.Errorf("rocm-smi --showmemuse --json: %w", err)
		}
		u, err := parseROCmMemUse(out)
		return u, true, err
	}
	if path, err := exec.LookPath("nvidia-smi"); err == nil {
		out, err := exec.CommandContext(ctx, path, "--query-gpu=memory.used,memory.total", "--format=csv,noheader,nounits").Output()
		if err != nil {
			return nil, true, fmt.Errorf("nvidia-smi --query-gpu: %w", err)
		}
		u, err := parseNvidiaMemUse(out)
		return u, true, err
	}
	return nil, false, nil
}

var rocmPercentKey = regexp.MustCompile(`(?i)gpu memory.*(use|allocated).*%`)

// parseROCmMemUse reads `rocm-smi --showmemuse --json`: {"card0": {"GPU Memory Allocated (VRAM%)": "3", ...}, ...}.
func parseROCmMemUse(out []byte) ([]float64, error) {
	var cards map[string]map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(out), &cards); err != nil {
		return nil, fmt.Errorf("rocm-smi output: %w", err)
	}
	var usage []float64
	for name, fields := range cards {
		if !strings.HasPrefix(name, "card") {
			continue
		}
		for k, v := range fields {
			if !rocmPercentKey.MatchString(k) {
				continue
			}
			f, err := strconv.ParseFloat(strings.TrimSpace(fmt.Sprint(v)), 64)
			if err != nil {
				return nil, fmt.Errorf("rocm-smi %s %q: %w", name, k, err)
			}
			usage = append(usage, f)
			break
		}
	}
	if len(usage) == 0 {
		return nil, fmt.Errorf("rocm-smi output has no GPU memory use field")
	}
	return usage, nil
}

// parseNvidiaMemUse reads "used, total" MiB lines.
func parseNvidiaMemUse(out []byte) ([]float64, error) {
	var usage []float64
	for line := range strings.Lines(string(out)) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		used, total, ok := strings.Cut(line, ",")
		if !ok {
			return nil, fmt.Errorf("nvidia-smi line %q: want \"used, total\"", line)
		}
		u, err1 := strconv.ParseFloat(strings.TrimSpace(used), 64)
		t, err2 := strconv.ParseFloat(strings.TrimSpace(total), 64)
		if err1 != nil || err2 != nil || t <= 0 {
			return nil, fmt.Errorf("nvidia-smi line %q: want two numbers", line)
		}
		usage = append(usage, 100*u/t)
	}
	if len(usage) == 0 {
		return nil, fmt.Errorf("nvidia-smi printed no GPUs")
	}
	return usage, nil
}

// GPUIdleOptions mirrors InferenceX's wait_for_amd_gpu_clean: poll until
// every GPU uses at most MaxPercent of its memory, up to Polls times.
type GPUIdleOptions struct {
	MaxPercent float64       // default 10
	Interval   time.Duration // default 10 s
	Polls      int           // default 90
}

// WaitGPUsIdle polls probe until all GPUs are idle. It returns checked=false
// when the platform has no GPU tool (nothing to wait for).
func WaitGPUsIdle(ctx context.Context, probe GPUProbe, o GPUIdleOptions) (checked bool, err error) {
	if o.MaxPercent <= 0 {
		o.MaxPercent = 10
	}
	if o.Interval <= 0 {
		o.Interval = 10 * time.Second
	}
	if o.Polls <= 0 {
		o.Polls = 90
	}
	var last []float64
	for i := range o.Polls {
		usage, ok, err := probe(ctx)
		if !ok {
			return false, nil
		}
		if err != nil {
			return true, err
		}
		last = usage
		busiest := 0.0
		for _, u := range usage {
			busiest = max(busiest, u)
		}
		if busiest <= o.MaxPercent {
			return true, nil
		}
		if i == o.Polls-1 {
			break
		}
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case <-time.After(o.Interval):
		}
	}
	return true, fmt.Errorf("GPUs still busy after %d polls (memory use %% per GPU: %v, want all <= %g): another job may still be draining", o.Polls, last, o.MaxPercent)
}
