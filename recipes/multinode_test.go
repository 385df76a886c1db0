package recipes_test

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"sweep/recipes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs/matrix"
	"sweep/recipes/schema"
)

const (
	amdDisaggKey  = "dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp"
	dynamoKey     = "dsv4-fp4-gb200-dynamo-vllm-agentic-mtp-disagg"
	dynamoAggKey  = "qwen3.5-fp4-gb300-dynamo-sglang-agentic-agg"
	h200VLLMKey   = "kimik3-fp4-h200-vllm-agentic"
	nscaleKimiKey = "kimik3-fp4-b200-dynamo-vllm-agentic-dspark"
)

// TestMultiNodePlanGolden plans the first and the last row of one AMD
// disaggregated key (tp8 without and with DP attention) and of one NVIDIA
// Dynamo key in full (JSON and text) against goldens we own.
func TestMultiNodePlanGolden(t *testing.T) {
	for _, key := range []string{amdDisaggKey, dynamoKey} {
		t.Run(key, func(t *testing.T) {
			rs := keyRows(t, key)
			pts, err := recipes.PlanMultiNode(matrix.Matrix{rs[0], rs[len(rs)-1]}, recipes.PlanOptions{})
			require.NoError(t, err)
			data, err := json.MarshalIndent(pts, "", "  ")
			require.NoError(t, err)
			var text bytes.Buffer
			require.NoError(t, recipes.WriteMultiNodeText(&text, pts))
			for ext, got := range map[string][]byte{"json": append(data, '\n'), "txt": text.Bytes()} {
				golden := "../testdata/recipes/plan-multinode-" + key + "." + ext + ".golden"
				if *update {
					require.NoError(t, os.WriteFile(golden, got, 0o644))
				}
				want, err := os.ReadFile(golden)
				require.NoError(t, err)
				assert.Equal(t, string(want), string(got), "run go test ./recipes -run TestMultiNodePlanGolden -update and review the diff")
			}
		})
	}
}

func roleOf(t *testing.T, p recipes.MultiNodePoint, role recipes.Role) recipes.RolePlan {
	t.Helper()
	i := slices.IndexFunc(p.Roles, func(r recipes.RolePlan) bool { return r.Role == role })
	require.GreaterOrEqual(t, i, 0, "no %s role in %+v", role, p.Roles)
	return p.Roles[i]
}

func TestPlanMultiNodeAMD(t *testing.T) {
	pts, err := recipes.PlanMultiNode(keyRows(t, amdDisaggKey), recipes.PlanOptions{RunnerName: "mi355x-amds_03"})
	require.NoError(t, err)
	require.Len(t, pts, 12)
	s, err := schema.Load("sglang", "v0.5.17")
	require.NoError(t, err)
	for _, p := range pts {
		assert.Equal(t, "sbatch", p.Submitter)
		assert.Equal(t, 2, p.Nodes, "PREFILL_NODES + DECODE_NODES")
		assert.Equal(t, 16, p.GPUs)
		for _, role := range []recipes.Role{recipes.RolePrefill, recipes.RoleDecode} {
			rp := roleOf(t, p, role)
			require.NotNil(t, rp.Command)
			// The worker argv reads back with the same schema: every flag
			// exists in SGLang v0.5.17 with a valid value.
			_, err := s.Parse(rp.Command.Argv[3:])
			require.NoError(t, err, "%s %s", p.Row.ExpName, role)
			assert.Equal(t, string(role), argValue(rp.Command.Argv, "--disaggregation-mode"))
			assert.Equal(t, "mori", argValue(rp.Command.Argv, "--disaggregation-transfer-backend"))
			if p.Row.Prefill.DPAttn {
				assert.Equal(t, "8", argValue(rp.Command.Argv, "--dp-size"))
			} else {
				assert.NotContains(t, rp.Command.Argv, "--dp-size")
			}
		}
		dec := roleOf(t, p, recipes.RoleDecode).Command.Argv
		assert.Equal(t, "3", argValue(dec, "--speculative-num-steps"), "DECODE_MTP_SIZE=3")
		assert.NotContains(t, roleOf(t, p, recipes.RolePrefill).Command.Argv, "--speculative-algorithm", "MTP is the decode worker's")
		router := roleOf(t, p, recipes.RoleRouter).Command.Argv
		assert.Equal(t, []string{"python", "-m", "sglang_router.launch_router", "--pd-disaggregation"}, router[:4])
		assert.Contains(t, router, "http://${PREFILL_0_ADDR}:8000")
		assert.Contains(t, router, "http://${DECODE_0_ADDR}:8000")
		assert.Equal(t, []string{"sbatch", "--parsable", "--exclusive", "-N", "2", "-n", "2"}, p.Submit.Argv[:7])
		assert.Equal(t, "mi355x-amds_03", argValue(p.Submit.Argv, "--job-name"))
		assert.Equal(t, recipes.AMDJobScript, p.Submit.Argv[len(p.Submit.Argv)-1])
		assert.Contains(t, p.ResultFilename, "_prefill-tp8-pp1-dcp1-pcp1-ep")
		assert.Regexp(t, `_disagg-true_spec-mtp_conc\d+_mi355x-amds_03$`, p.ResultFilename)
	}
}

func TestPlanMultiNodeSrtSlurm(t *testing.T) {
	tests := []struct {
		key, runner, repo, ref string
		argv                   []string
		nodes                  int
		roles                  []recipes.Role
	}{
		{dynamoKey, "gb200-nv_1", recipes.NvidiaSrtSlurm, "v1.0.45",
			[]string{"srtctl", "apply", "--no-preflight", "-f", "recipes/vllm/deepseek-v4/agentic/disagg-gb200-1p1d-dep8-dep8-mtp-agentic.yaml", "--tags", "gb200,dsv4,fp4,x,infmax-${DATE}"},
			4, []recipes.Role{recipes.RolePrefill, recipes.RoleDecode, recipes.RoleRouter, recipes.RoleClient}},
		{dynamoAggKey, "gb300-nv_0", recipes.NvidiaSrtSlurm, "v1.0.38",
			[]string{"srtctl", "apply", "-f", "recipes/sglang/qwen3.5/gb300-fp4/agentic/agg-gb300-tp2-c1-mtp-hicache-jid2530006.yaml", "--tags", "gb300,qwen3.5,fp4,x,infmax-${DATE}", "--no-preflight"},
			1, []recipes.Role{recipes.RoleWorker, recipes.RoleRouter, recipes.RoleClient}},
		{h200VLLMKey, "h200-dgxc-slurm_2", recipes.FstackSrtSlurm, "df5baa93f4caf5169dea2a4236ad2cc742fe40e7",
			[]string{"srtctl", "apply", "-f", "recipes/vllm/kimi-k3/agentic/agg-h200-tp16dp2ep32-latency-agentic.yaml", "--tags", "h200,kimik3,fp4,agentic,infmax-${DATE}"},
			4, []recipes.Role{recipes.RoleWorker, recipes.RoleRouter, recipes.RoleClient}},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			rs := keyRows(t, tc.key)
			pts, err := recipes.PlanMultiNode(matrix.Matrix{rs[0]}, recipes.PlanOptions{RunnerName: tc.runner})
			require.NoError(t, err)
			p := pts[0]
			assert.Equal(t, "srtctl", p.Submitter)
			require.NotNil(t, p.SrtSlurm)
			assert.Equal(t, tc.repo, p.SrtSlurm.Repo)
			assert.Equal(t, tc.ref, p.SrtSlurm.Ref)
			assert.Equal(t, tc.argv, p.Submit.Argv)
			assert.Equal(t, tc.nodes, p.Nodes)
			var roles []recipes.Role
			for _, r := range p.Roles {
				roles = append(roles, r.Role)
				if r.Role != recipes.RoleRouter && r.Role != recipes.RoleClient {
					assert.Contains(t, r.RenderedBy, "srtctl at "+tc.ref)
				}
			}
			assert.Equal(t, tc.roles, roles)
		})
	}
	t.Run("recipe kept at InferenceX's path", func(t *testing.T) {
		pts, err := recipes.PlanMultiNode(keyRows(t, "glm5.2-fp4-gb300-dynamo-trt-agentic-agg-mtp")[:1], recipes.PlanOptions{RunnerName: "gb300-nv_0"})
		require.NoError(t, err)
		p := pts[0]
		require.True(t, strings.HasPrefix(p.Recipe, recipes.SrtRecipes), p.Recipe)
		assert.Equal(t, "the recipe ("+p.Recipe+" copied over the checkout; job name set to the runner's)", p.Files[p.Recipe])
	})
}

// TestPlanMultiNodeRefusals: what PlanMultiNode cannot plan says exactly why.
func TestPlanMultiNodeRefusals(t *testing.T) {
	r := keyRows(t, dynamoKey)[0].Clone()
	r.Prefill.AdditionalSettings = nil
	_, err := recipes.PlanMultiNode(matrix.Matrix{r}, recipes.PlanOptions{RunnerName: "gb200-nv_0"})
	require.ErrorIs(t, err, recipes.ErrNotSupported)
	assert.Contains(t, err.Error(), "no CONFIG_FILE prefill setting")

	r = keyRows(t, nscaleKimiKey)[0]
	_, err = recipes.PlanMultiNode(matrix.Matrix{r}, recipes.PlanOptions{RunnerName: "mi325x-amds_0"})
	require.ErrorIs(t, err, recipes.ErrInvalidOptions) // not a runner of the key's label, nor of its GPU
	assert.Contains(t, err.Error(), "--runner-name mi325x-amds_0 is not a runner of "+nscaleKimiKey)
	r = r.Clone()
	r.Runner = "cluster:mi325x-amds"
	_, err = recipes.PlanMultiNode(matrix.Matrix{r}, recipes.PlanOptions{RunnerName: "mi325x-amds_00"})
	require.ErrorIs(t, err, recipes.ErrNotSupported)
	assert.Contains(t, err.Error(), "launch_mi325x-amds.sh has no agentic srt-slurm branch")

	r = keyRows(t, amdDisaggKey)[0].Clone()
	r.Prefill.AdditionalSettings = []string{"CLIENT_IMAGE=x"}
	_, err = recipes.PlanMultiNode(matrix.Matrix{r}, recipes.PlanOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "prefill: additional-settings has no PREFILL_NODES")

	r = keyRows(t, amdDisaggKey)[0].Clone()
	r.Framework = "vllm-disagg"
	_, err = recipes.PlanMultiNode(matrix.Matrix{r}, recipes.PlanOptions{})
	require.ErrorIs(t, err, recipes.ErrNotSupported)
	assert.Contains(t, err.Error(), "SGLang disaggregated workers only")
}

// TestPlanMultiNodeMatchesSrtctl compares the planned nodes and GPUs per
// node with the #SBATCH lines srtctl itself rendered (dry-run, from source
// at the ref InferenceX pins) for InferenceX's recipe of the key; see
// testdata/README.md.
func TestPlanMultiNodeMatchesSrtctl(t *testing.T) {
	tests := []struct {
		key, runner, recipe string
		// infraNodes are nodes srtctl adds for the recipe's infra block.
		infraNodes int
		// gpusPerNode: compare the first role's GPUs per node with
		// srtctl's --gpus-per-node (srtctl asks for whole nodes when the
		// workers of a role share one).
		gpusPerNode bool
	}{
		{dynamoKey, "gb200-nv_0", "disagg-gb200-1p1d-dep8-dep8-mtp-agentic.yaml", 0, true},
		{dynamoAggKey, "gb300-nv_0", "agg-gb300-tp2-c1-mtp-hicache-jid2530006.yaml", 0, true},
		{"dsv4-fp8-h200-dynamo-sglang-agentic-agg", "h200-dgxc-slurm_0", "agg-h200-tp8-mtp-kvoffload.yaml", 1, true},
		// Workers smaller than a node share the role's nodes.
		{"qwen3.5-fp4-gb300-dynamo-trt-agentic-disagg", "gb300-nv_0", "disagg-gb300-1p1d-dep1-tep2-c44-b8-mtp-kvoffload.yaml", 0, false},
		{"qwen3.5-fp4-gb300-dynamo-trt-agentic-disagg", "gb300-nv_0", "disagg-gb300-2p2d-dep1-tep2-c52-b4-mtp-kvoffload.yaml", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.recipe, func(t *testing.T) {
			data, err := os.ReadFile("../testdata/recipes/srtctl/" + tc.recipe + ".sbatch")
			require.NoError(t, err)
			sbatch := map[string]string{}
			for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				k, v, _ := strings.Cut(strings.TrimPrefix(l, "#SBATCH "), "=")
				sbatch[k] = v
			}
			rs := keyRows(t, tc.key)
			i := slices.IndexFunc(rs, func(r *matrix.Row) bool {
				return strings.HasSuffix(recipes.Settings(r.Prefill)["CONFIG_FILE"], "/"+tc.recipe)
			})
			require.GreaterOrEqual(t, i, 0, "no row of %s uses %s", tc.key, tc.recipe)
			pts, err := recipes.PlanMultiNode(matrix.Matrix{rs[i]}, recipes.PlanOptions{RunnerName: tc.runner})
			require.NoError(t, err)
			p := pts[0]
			assert.Equal(t, sbatch["--nodes"], strconv.Itoa(p.Nodes+tc.infraNodes))
			if tc.gpusPerNode {
				assert.Equal(t, sbatch["--gpus-per-node"], strconv.Itoa(p.Roles[0].GPUsPerNode))
			}
		})
	}
}

func TestMultiNodeRows(t *testing.T) {
	single := &matrix.Row{Kind: matrix.AgenticSingleNode, ConfigKey: "s"}
	multi := &matrix.Row{Kind: matrix.AgenticMultiNode, ConfigKey: "m"}
	got, err := recipes.MultiNodeRows(matrix.Matrix{single})
	assert.False(t, got)
	assert.NoError(t, err)
	got, err = recipes.MultiNodeRows(matrix.Matrix{multi, multi})
	assert.True(t, got)
	assert.NoError(t, err)
	_, err = recipes.MultiNodeRows(matrix.Matrix{multi, single})
	var mixed *recipes.MixedNodesError
	require.ErrorAs(t, err, &mixed)
	assert.Equal(t, recipes.MixedNodesError{Single: "s", Multi: "m"}, *mixed)
	assert.EqualError(t, err, "--config-keys selects single-node (s) and multi-node (m) keys; plan them separately")
}
