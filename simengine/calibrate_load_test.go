package simengine

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/internal/atomicfile"
	"sweep/internal/inputfile"
)

// TestLoadCalibration: a calibration file reads back as written (its
// keys in snake case, "arms" too); a hand edit gone wrong is refused at
// its line and column with the key; a FIFO in its place is refused
// without blocking.
func TestLoadCalibration(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	cal := &Calibration{Version: CalibrationVersion, Source: "results", Arms: []ArmCalibration{{Engine: configs.SGLang, Model: "Org/M", GPU: "mi325x", TP: 8, EP: 1, StepScale: 1.5, PoolTokens: 2000000}}}
	require.NoError(t, atomicfile.WriteJSON(good, cal))
	data, err := os.ReadFile(good)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"arms": [`)
	got, err := LoadCalibration(good)
	require.NoError(t, err)
	assert.Equal(t, cal, got)
	bom := filepath.Join(dir, "bom.json")
	require.NoError(t, os.WriteFile(bom, append([]byte("\xef\xbb\xbf"), data...), 0o644))
	got, err = LoadCalibration(bom)
	require.NoError(t, err, "an editor's byte-order mark is read past")
	assert.Equal(t, cal, got)

	typo := filepath.Join(dir, "typo.json")
	require.NoError(t, os.WriteFile(typo, []byte("{\n  \"version\": 1,\n  \"arms\": [\n    {\"engine\": \"sglang\", \"model\": \"Org/M\", \"gpu\": \"mi325x\", \"tp\": 8,\n     \"pool_token\": 2000000}\n  ]\n}\n"), 0o644))
	_, err = LoadCalibration(typo)
	require.Error(t, err)
	assert.Equal(t, typo+":5:6: arms[0].pool_token: unknown key: want the JSON sweep sim calibrate writes", err.Error())

	fifo := filepath.Join(dir, "fifo.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	_, err = LoadCalibration(fifo)
	var notRegular *inputfile.NotRegularError
	assert.True(t, errors.As(err, &notRegular), "%v", err)
}

// TestLoadCalibrationRefuses: a value out of what an engine can run is
// refused at its arm's line and column, with the key and what is wanted
// (a scale of 1e9 hung the engine before its first step; an unknown
// engine or GPU, which no engine matches, read as a calibration that
// silently applied to nothing), and so is a second arm for the same
// engines, which would never apply. An arm matches a model by its path's
// last element (a local copy of the weights).
func TestLoadCalibrationRefuses(t *testing.T) {
	arm := `{"engine": "sglang", "model": "Org/M", "gpu": "mi325x", "tp": 8, "ep": 1, "step_scale": 1.5, "pool_tokens": 2000000}`
	for _, tc := range []struct {
		name, arms, want string
	}{
		{"no arm", ``, `: arms: no arm: want at least one`},
		{"engine", `{"engine": "SGLang", "model": "Org/M", "gpu": "mi325x", "tp": 8}`, `:4:5: arms[0].engine: "SGLang": want "sglang" or "vllm"`},
		{"model", `{"engine": "sglang", "model": "", "gpu": "mi325x", "tp": 8}`, `:4:5: arms[0].model: empty`},
		{"gpu", `{"engine": "vllm", "model": "Org/M", "gpu": "nosuchgpu", "tp": 8}`, `:4:5: arms[0].gpu: "nosuchgpu": want one of`},
		{"ep", `{"engine": "vllm", "model": "Org/M", "gpu": "h200", "tp": 8, "ep": -3}`, `:4:5: arms[0].tp: tp 8, ep -3: want tp >= 1 and ep >= 0`},
		{"huge scale", `{"engine": "sglang", "model": "Org/M", "gpu": "mi325x", "tp": 8, "step_scale": 1e9}`, `:4:5: arms[0].step_scale: 1e+09: want 0 (the model's step costs) or 0.01 to 100`},
		{"tiny scale", `{"engine": "sglang", "model": "Org/M", "gpu": "mi325x", "tp": 8, "step_scale": 1e-300}`, `:4:5: arms[0].step_scale: 1e-300: want 0`},
		{"tiny pool", `{"engine": "sglang", "model": "Org/M", "gpu": "mi325x", "tp": 8, "pool_tokens": 1}`, `:4:5: arms[0].pool_tokens: 1: want 0 (the model's pool) or 4096 to`},
		{"role", `{"engine": "sglang", "model": "Org/M", "gpu": "mi325x", "tp": 8, "role": "Decode"}`, `:4:5: arms[0].role: "Decode": want "prefill" or "decode"`},
		{"same arm", arm + ",\n    " + `{"engine": "sglang", "model": "org/m", "gpu": "MI325X", "tp": 8, "step_scale": 3}`, `:5:5: arms[1]: the same arm as arms[0] (sglang org/m MI325X tp8 ep1): want one fit per arm`},
		{"kv cache dtype", `{"engine": "sglang", "model": "Org/M", "gpu": "mi325x", "tp": 8, "kv_cache_dtype": "bogus"}`,
			`:4:5: arms[0].kv_cache_dtype: "bogus": want one of sglang's --kv-cache-dtype values (auto, fp8_e5m2, fp8_e4m3, `},
		{"vllm kv cache dtype", `{"engine": "vllm", "model": "Org/M", "gpu": "h200", "tp": 8, "kv_cache_dtype": "fp8_e4m3 "}`, `:4:5: arms[0].kv_cache_dtype: "fp8_e4m3 ": want one of vllm's --kv-cache-dtype values (auto, bfloat16, float16, fp8, `},
		{"draft steps", `{"engine": "sglang", "model": "Org/M", "gpu": "mi325x", "tp": 8, "draft_steps": -1}`, `:4:5: arms[0].draft_steps: -1: want the engine's draft steps per verify step (0: no speculative decoding), or no key for any`},
		{"same arm, one of any dtype", arm + ",\n    " + `{"engine": "sglang", "model": "Org/M", "gpu": "mi325x", "tp": 8, "kv_cache_dtype": "fp8_e4m3", "draft_steps": 3}`, `:5:5: arms[1]: the same arm as arms[0]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cal.json")
			list := "[\n    " + tc.arms + "\n  ]"
			if tc.arms == "" {
				list = "[]"
			}
			require.NoError(t, os.WriteFile(path, []byte("{\n  \"version\": 1,\n  \"arms\": "+list+"\n}\n"), 0o644))
			_, err := LoadCalibration(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), path+tc.want)
		})
	}
	// The same layout with and without a host KV tier are two arms.
	path := filepath.Join(t.TempDir(), "cal.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"version": 1, "arms": [`+arm+`, {"engine": "sglang", "model": "Org/M", "gpu": "mi325x", "tp": 8, "host_kv": true, "step_scale": 1.4}]}`), 0o644))
	cal, err := LoadCalibration(path)
	require.NoError(t, err)
	on := Config{Engine: configs.SGLang, ModelPath: "Org/M", GPU: "mi325x", TP: 8, HostKV: HostKV{Ratio: 2}}
	off := on
	off.HostKV = HostKV{}
	assert.InDelta(t, 1.4, cal.Arm(on).StepScale, 1e-9)
	assert.InDelta(t, 1.5, cal.Arm(off).StepScale, 1e-9)
	// A local copy of the weights is the same model (--model-path
	// /models/M/ for Org/M); another name is not.
	local := off
	local.ModelPath = "/models/m/"
	require.NotNil(t, cal.Arm(local))
	assert.InDelta(t, 1.5, cal.Arm(local).StepScale, 1e-9)
	local.ModelPath = "/models/M-2"
	assert.Nil(t, cal.Arm(local))
}

// TestCalibrationArmByCacheAndDrafts: an arm that names a KV cache dtype
// and draft steps calibrates only engines whose KV cache has that width
// (FP8 E4M3 and E5M2 alike; "auto" and BF16 alike) and that draft as many
// steps, what sets the pool and the step costs beside the layout; one that
// names neither calibrates any (a hand-written arm). Before, an arm fitted
// on an FP8 KV cache with 3 MTP drafts calibrated a BF16-KV or a
// non-speculative engine of the same layout, its pool half or twice as
// many bytes a token.
func TestCalibrationArmByCacheAndDrafts(t *testing.T) {
	layout := `"engine": "sglang", "model": "Org/M", "gpu": "mi325x", "tp": 8, "ep": 1`
	path := filepath.Join(t.TempDir(), "cal.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"version": 1, "arms": [{`+layout+`, "kv_cache_dtype": "fp8_e4m3", "draft_steps": 3, "step_scale": 1.1},
		{`+layout+`, "kv_cache_dtype": "auto", "draft_steps": 3, "step_scale": 1.2}, {`+layout+`, "kv_cache_dtype": "fp8_e4m3", "draft_steps": 0, "step_scale": 1.3}]}`), 0o644))
	cal, err := LoadCalibration(path)
	require.NoError(t, err, "three arms: two widths, two draft counts")
	mtp := Spec{Algorithm: "EAGLE", NumSteps: 3, TopK: 1, NumDraftTokens: 4}
	for _, tc := range []struct {
		name  string
		dtype string
		spec  Spec
		want  float64 // 0: no arm
	}{
		{"fp8, 3 drafts", "fp8_e4m3", mtp, 1.1},
		{"another fp8", "fp8_e5m2", mtp, 1.1},
		{"no dtype: auto, 16-bit", "", mtp, 1.2},
		{"bf16", "bf16", mtp, 1.2},
		{"fp8, no drafts", "fp8_e4m3", Spec{}, 1.3},
		{"fp4", "fp4_e2m1", mtp, 0},
		{"fp8, 1 draft", "fp8_e4m3", Spec{Algorithm: "EAGLE", NumSteps: 1, TopK: 1, NumDraftTokens: 2}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Config{Engine: configs.SGLang, ModelPath: "Org/M", GPU: "mi325x", TP: 8, EP: 1, KVCacheDType: tc.dtype, Spec: tc.spec}.Normalize()
			require.NoError(t, err)
			got := cal.Arm(c)
			if tc.want == 0 {
				assert.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			assert.InDelta(t, tc.want, got.StepScale, 1e-9)
		})
	}
	anyDType := &Calibration{Arms: []ArmCalibration{{Engine: configs.SGLang, Model: "Org/M", GPU: "mi325x", TP: 8, EP: 1, StepScale: 1.4}}}
	c, err := Config{Engine: configs.SGLang, ModelPath: "Org/M", GPU: "mi325x", TP: 8, EP: 1, KVCacheDType: "fp4_e2m1"}.Normalize()
	require.NoError(t, err)
	require.NotNil(t, anyDType.Arm(c), "an arm naming neither calibrates any engine of its layout")
}

// TestCalibrationArmByRole: a disaggregated worker takes the arm of its
// layout and role (a prefill and a decode worker of the same layout, as
// the MI355X DeepSeek-V4 disaggregated arms run them, each their own),
// else the arm of its layout without a role; an engine serving both
// phases never takes a worker's arm, and a file may hold the three.
func TestCalibrationArmByRole(t *testing.T) {
	layout := `"engine": "sglang", "model": "Org/M", "gpu": "mi355x", "tp": 8, "ep": 1`
	path := filepath.Join(t.TempDir(), "cal.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"version": 1, "arms": [{`+layout+`, "step_scale": 1.1}, {`+layout+`, "role": "prefill", "step_scale": 1.2}, {`+layout+`, "role": "decode", "step_scale": 1.3, "pool_tokens": 500000}]}`), 0o644))
	cal, err := LoadCalibration(path)
	require.NoError(t, err)
	engine := Config{Engine: configs.SGLang, ModelPath: "Org/M", GPU: "mi355x", TP: 8, EP: 1}
	prefill, decode := engine, engine
	prefill.Disagg, decode.Disagg = DisaggPrefill, DisaggDecode
	assert.InDelta(t, 1.1, cal.Arm(engine).StepScale, 1e-9)
	assert.InDelta(t, 1.2, cal.Arm(prefill).StepScale, 1e-9)
	assert.InDelta(t, 1.3, cal.Arm(decode).StepScale, 1e-9)
	assert.Equal(t, "sglang Org/M mi355x tp8 ep1 decode worker", cal.Arm(decode).Label())

	cal.Arms = cal.Arms[1:] // the workers' arms alone
	assert.Nil(t, cal.Arm(engine), "a worker's fit is not an engine's serving both phases")
	cal.Arms = cal.Arms[:1] // the prefill worker's alone
	assert.Nil(t, cal.Arm(decode))
	cal.Arms = []ArmCalibration{{Engine: configs.SGLang, Model: "Org/M", GPU: "mi355x", TP: 8, EP: 1, StepScale: 1.1}}
	assert.InDelta(t, 1.1, cal.Arm(decode).StepScale, 1e-9, "a file without the role's arm: the layout's, as before roles")
}
