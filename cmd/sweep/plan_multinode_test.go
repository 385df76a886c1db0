package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/recipes"
)

func TestPlanMultiNodeCommand(t *testing.T) {
	t.Run("json with the runner's srtctl apply", func(t *testing.T) {
		var out bytes.Buffer
		o := &planOptions{IO: &IOStreams{Out: &out}, ConfigKeys: []string{"dsv4-fp4-gb200-dynamo-vllm-agentic-mtp-disagg"}, Conc: []int{32}, Format: "json"}
		o.Plan.RunnerName = "gb200-nv_1"
		require.NoError(t, planRun(t.Context(), o))
		var pts []struct {
			ConfigKey string                 `json:"config_key"`
			Submitter string                 `json:"submitter"`
			Submit    recipes.HostCommand    `json:"submit"`
			SrtSlurm  recipes.SrtSlurmSource `json:"srt_slurm"`
			Roles     []recipes.RolePlan     `json:"roles"`
			Result    string                 `json:"result_filename"`
		}
		require.NoError(t, json.Unmarshal(out.Bytes(), &pts))
		require.Len(t, pts, 1)
		p := pts[0]
		assert.Equal(t, "srtctl", p.Submitter)
		assert.Equal(t, []string{"srtctl", "apply", "--no-preflight", "-f", "recipes/vllm/deepseek-v4/agentic/disagg-gb200-1p1d-dep8-dep8-mtp-agentic.yaml", "--tags", "gb200,dsv4,fp4,x,infmax-${DATE}"}, p.Submit.Argv)
		assert.Equal(t, map[string]string{"RUNNER_NAME": "inferencex-gb200-nv_1"}, p.Submit.Env)
		assert.Equal(t, "v1.0.45", p.SrtSlurm.Ref)
		assert.Len(t, p.Roles, 4)
		assert.Equal(t, "dsv4_p1x8ep8dpa_d1x8ep8dpa_conc32_fp4_dynamo-vllm_prefill-tp8-pp1-dcp1-pcp1-ep8-dptrue-nw1_decode-tp8-pp1-dcp1-pcp1-ep8-dptrue-nw1_disagg-true_spec-mtp_conc32_gb200-nv_1_recipe-dd5fd7d9ec88c415", p.Result, "the name the launched job writes (its row stamped as sweep run stamps it)")
	})
	t.Run("text for the AMD disaggregated key", func(t *testing.T) {
		var out bytes.Buffer
		require.NoError(t, planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &out}, ConfigKeys: []string{"dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp"}, Conc: []int{1}, Format: "text"}))
		assert.Contains(t, out.String(), "# launcher launch_mi355x-amds.sh submits with sbatch: 2 node(s), 16 worker GPU(s)\n")
		assert.Contains(t, out.String(), "--disaggregation-mode decode")
	})
	t.Run("single-node and multi-node keys together are a usage error", func(t *testing.T) {
		err := planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &bytes.Buffer{}}, Format: "text",
			ConfigKeys: []string{"qwen3.5-fp8-b200-sglang-agentic-mtp", "dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp"}})
		var fe *FlagError
		require.ErrorAs(t, err, &fe)
		assert.Contains(t, err.Error(), "plan them separately")
	})
}
