package simengine

import "slices"

// gpuSpec is the little the capacity model needs to know about a GPU.
type gpuSpec struct {
	hbmGB   float64 // memory per GPU
	hbmTBps float64 // memory bandwidth per GPU
	pflops  float64 // dense FP8 peak per GPU
	// fp4PFLOPS is the dense FP4 peak per GPU (NVFP4, MXFP4), 0 where the
	// GPU has no FP4 tensor cores.
	fp4PFLOPS float64
	speed     float64 // relative step-overhead speed (kernel launch, comm)
}

// gpuSpecs is read-only: rough public figures per GPU model. The peaks
// are dense (without 2:4 sparsity, which doubles the datasheets' figures):
// MI300X and MI325X 2.6 PF FP8 (AMD's datasheets: 2,614.9 TFLOPS, 5,229.8
// with sparsity); MI355X 5.0 PF FP8 and 10 PF MXFP4 (AMD: 20.1 PF FP4
// with sparsity; ISSCC 2026, five petaflops FP8); H100 and H200 1.98 PF
// FP8; B200 4.5 PF FP8 and 9 PF FP4 (HGX B200: 72 PF FP8 with sparsity
// and 72 PF FP4 dense for 8 GPUs); B300 4.5 PF FP8, as B200, and 13.5 PF
// FP4 (HGX B300: 72 PF FP8 with sparsity, 108 PF FP4 dense for 8 GPUs;
// Blackwell Ultra's 15 PF dense NVFP4 is at GB300's clocks); GB200 5 PF
// FP8 and 10 PF FP4 (GB200 NVL72: 720 PF FP4 dense for 72 GPUs).
// MI355X's 10 PF is left out of the table (its MXFP4 checkpoints'
// prefill stays at the FP8 rate): with it Qwen3.5 MXFP4 MI355X's TP4 arm
// still gains at the top of its window (c40), and the simulated corpora
// of sweep/knee, which hold the MI355X keys, would have to be made again.
var gpuSpecs = map[string]gpuSpec{
	"mi300x": {hbmGB: 192, hbmTBps: 5.3, pflops: 2.6, speed: 1.0},
	"mi325x": {hbmGB: 256, hbmTBps: 6.0, pflops: 2.6, speed: 1.05},
	"mi355x": {hbmGB: 288, hbmTBps: 8.0, pflops: 5.0, speed: 1.4},
	"h100":   {hbmGB: 80, hbmTBps: 3.35, pflops: 2.0, speed: 1.0},
	"h200":   {hbmGB: 141, hbmTBps: 4.8, pflops: 2.0, speed: 1.05},
	"b200":   {hbmGB: 180, hbmTBps: 8.0, pflops: 4.5, fp4PFLOPS: 9, speed: 1.4},
	"b300":   {hbmGB: 288, hbmTBps: 8.0, pflops: 4.5, fp4PFLOPS: 13.5, speed: 1.5},
	"gb200":  {hbmGB: 186, hbmTBps: 8.0, pflops: 5.0, fp4PFLOPS: 10, speed: 1.5},
}

func gpuNames() []string {
	names := make([]string, 0, len(gpuSpecs))
	for n := range gpuSpecs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
