package abgate

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckRegistryName(t *testing.T) {
	for _, tc := range []struct{ name, err string }{
		{"MiniMaxAI/MiniMax-M3-MXFP8-FC", ""},
		{"Qwen/Qwen3.6-27B-FC", ""},
		{"Org/My_Model-FC", `contains "_": bfcl maps result directories back to registry names with "_" → "/"`},
		{"", "empty"},
		{"Org/M FC", "white space"},
	} {
		err := CheckRegistryName(tc.name)
		if tc.err == "" {
			assert.NoError(t, err, tc.name)
			continue
		}
		require.Error(t, err, tc.name)
		assert.Contains(t, err.Error(), tc.err)
	}
	// Write refuses the name before writing anything.
	dir := filepath.Join(t.TempDir(), "py")
	err := Registry{Name: "Org/My_Model-FC", Dir: dir}.Write()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `use a name without "_" (e.g. "Org/My-Model-FC")`)
	assert.NoDirExists(t, dir)
}

// TestRegisteredName: the stand-in's check passes only with the registration
// file first on PYTHONPATH, unchanged, and a usable key.
func TestRegisteredName(t *testing.T) {
	dir := t.TempDir()
	r := Registry{Name: "Org/M-FC", APIModel: "Org/M", Dir: filepath.Join(dir, "py")}
	require.NoError(t, r.Write())
	env := r.Env("/usr/lib/extra")
	assert.Equal(t, map[string]string{"PYTHONPATH": r.Dir + ":/usr/lib/extra", EnvRegistryName: "Org/M-FC", EnvAPIModel: "Org/M"}, env)
	assert.Equal(t, r.Dir, Registry{Name: "x", Dir: r.Dir}.Env("")["PYTHONPATH"])
	assert.Equal(t, "x", Registry{Name: "x", Dir: r.Dir}.Env("")[EnvAPIModel], "the API model defaults to the key")
	with := func(changes map[string]string) func(string) string {
		m := map[string]string{}
		for k, v := range env {
			m[k] = v
		}
		for k, v := range changes {
			m[k] = v
		}
		return func(k string) string { return m[k] }
	}
	name, err := RegisteredName(with(nil))
	require.NoError(t, err)
	assert.Equal(t, "Org/M-FC", name)

	other := filepath.Join(dir, "other")
	require.NoError(t, os.MkdirAll(other, 0o755))
	tampered := filepath.Join(dir, "tampered")
	require.NoError(t, os.MkdirAll(tampered, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(tampered, SitecustomizeFile), []byte("import os\n"), 0o644))
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"PYTHONPATH": ""}, "PYTHONPATH is empty"},
		{map[string]string{"PYTHONPATH": other + ":" + r.Dir}, "the first PYTHONPATH entry " + other + " has no sitecustomize.py"},
		{map[string]string{"PYTHONPATH": tampered}, "is not the registration file sweep writes"},
		{map[string]string{EnvRegistryName: ""}, EnvRegistryName + " is not set"},
		{map[string]string{EnvRegistryName: "Org/M_FC"}, `contains "_"`},
	} {
		_, err := RegisteredName(with(tc.env))
		require.Error(t, err, tc.env)
		assert.Contains(t, err.Error(), tc.want)
	}
}

// fakeBFCL is a stand-in for bfcl_eval's modules the registration touches,
// with ModelConfig's fields at bfcl-eval 2026.3.23 (gorilla 6ea57973).
var fakeBFCL = map[string]string{
	"bfcl_eval/__init__.py":                             "",
	"bfcl_eval/constants/__init__.py":                   "",
	"bfcl_eval/model_handler/__init__.py":               "",
	"bfcl_eval/model_handler/api_inference/__init__.py": "",
	"bfcl_eval/model_handler/api_inference/openai_completion.py": `
class OpenAICompletionsHandler:
    pass
`,
	"bfcl_eval/constants/model_config.py": `
from dataclasses import dataclass
from typing import Optional

from bfcl_eval.model_handler.api_inference.openai_completion import OpenAICompletionsHandler


@dataclass
class ModelConfig:
    model_name: str
    display_name: str
    url: str
    org: str
    license: str
    model_handler: str
    input_price: Optional[float] = None
    output_price: Optional[float] = None
    is_fc_model: bool = True
    underscore_to_dot: bool = False


api_inference_model_map = {
    "gorilla-openfunctions-v2": ModelConfig(
        model_name="gorilla-openfunctions-v2",
        display_name="Gorilla-OpenFunctions-v2 (FC)",
        url="https://gorilla.cs.berkeley.edu/",
        org="Gorilla LLM",
        license="Apache 2.0",
        model_handler=OpenAICompletionsHandler,
    ),
}

MODEL_CONFIG_MAPPING = {
    **api_inference_model_map,
}
`,
}

// probe imports the fake registry as bfcl's CLI does and prints it.
const probe = `
import json
from bfcl_eval.constants.model_config import MODEL_CONFIG_MAPPING
out = {}
for key, c in MODEL_CONFIG_MAPPING.items():
    out[key] = {"model_name": c.model_name, "handler": c.model_handler.__name__,
                "is_fc_model": c.is_fc_model, "underscore_to_dot": getattr(c, "underscore_to_dot", None)}
print(json.dumps(out, sort_keys=True))
`

// TestSitecustomizePython runs the generated sitecustomize.py in a real
// Python against a fake bfcl_eval: the entry is in MODEL_CONFIG_MAPPING with
// OpenAICompletionsHandler and underscore_to_dot=True, and every problem is
// on stderr with the key left out.
func TestSitecustomizePython(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH: the generated sitecustomize.py is not run")
	}
	fake := t.TempDir()
	write := func(files map[string]string) {
		for rel, text := range files {
			file := filepath.Join(fake, filepath.FromSlash(rel))
			require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
			require.NoError(t, os.WriteFile(file, []byte(text), 0o644))
		}
	}
	write(fakeBFCL)
	r := Registry{Name: "Org/M-FC", APIModel: "Org/M", Dir: filepath.Join(t.TempDir(), "py")}
	require.NoError(t, r.Write())
	run := func(env map[string]string) (map[string]map[string]any, string) {
		t.Helper()
		cmd := exec.Command(python, "-c", probe)
		cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, stderr.String())
		var got map[string]map[string]any
		require.NoError(t, json.Unmarshal(out, &got), string(out))
		return got, stderr.String()
	}
	gorilla := map[string]any{"model_name": "gorilla-openfunctions-v2", "handler": "OpenAICompletionsHandler", "is_fc_model": true, "underscore_to_dot": false}

	got, stderr := run(r.Env(fake))
	assert.Empty(t, stderr)
	assert.Equal(t, map[string]map[string]any{
		"gorilla-openfunctions-v2": gorilla,
		"Org/M-FC":                 {"model_name": "Org/M", "handler": "OpenAICompletionsHandler", "is_fc_model": true, "underscore_to_dot": true},
	}, got)

	// Without the key, or without the file first on the path, nothing is registered.
	env := r.Env(fake)
	delete(env, EnvRegistryName)
	got, stderr = run(env)
	assert.Empty(t, stderr)
	assert.Equal(t, map[string]map[string]any{"gorilla-openfunctions-v2": gorilla}, got)
	got, _ = run(map[string]string{"PYTHONPATH": fake, EnvRegistryName: "Org/M-FC"})
	assert.NotContains(t, got, "Org/M-FC")

	// The sitecustomize the file shadows still runs.
	shadowed := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(shadowed, SitecustomizeFile), []byte("import sys\nsys.stderr.write('shadowed sitecustomize ran\\n')\n"), 0o644))
	got, stderr = run(r.Env(fake + ":" + shadowed))
	assert.Equal(t, "shadowed sitecustomize ran\n", stderr)
	assert.Contains(t, got, "Org/M-FC")

	// A key with "_" is refused on stderr (the Go side refuses it first).
	env = r.Env(fake)
	env[EnvRegistryName] = "Org/M_FC"
	got, stderr = run(env)
	assert.NotContains(t, got, "Org/M_FC")
	assert.Contains(t, stderr, `sweep sitecustomize: not registered: SWEEP_BFCL_REGISTRY_NAME holds a "_"`)

	// A bfcl_eval whose ModelConfig lacks underscore_to_dot is reported.
	old := strings.ReplaceAll(fakeBFCL["bfcl_eval/constants/model_config.py"], "    underscore_to_dot: bool = False\n", "")
	write(map[string]string{"bfcl_eval/constants/model_config.py": old})
	got, stderr = run(r.Env(fake))
	assert.NotContains(t, got, "Org/M-FC")
	assert.Contains(t, stderr, "not registered: bfcl_eval's ModelConfig has no field(s) underscore_to_dot")
}
