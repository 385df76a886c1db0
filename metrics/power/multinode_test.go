package power

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func ptr(f float64) *float64 { return &f }

// TestSumNodes checks the multi-node sums against values worked by hand
// from aggregate_power_multinode.py's formulas (843c6254f).
func TestSumNodes(t *testing.T) {
	w := &Window{Start: 100, End: 110, Completed: 4, TotalInputTokens: 1000, TotalOutputTokens: 200}
	for _, tc := range []struct {
		name            string
		nodes           []NodeEnergy
		prefill, decode int
		want            Metrics
		roles           RoleMetrics
	}{
		{
			name:    "one prefill and one decode node",
			nodes:   []NodeEnergy{{RolePrefill, []float64{1000, 2000}}, {RoleDecode, []float64{3000, 4000}}},
			prefill: 2, decode: 2,
			// 10000 J over 10 s and 4 GPUs; 1200 tokens in all.
			want: Metrics{AvgPowerW: 250, AvgTotalGPUPowerW: 1000, TotalGPUEnergyJ: 10000, JoulesPerSuccessfulQuery: 2500,
				JoulesPerInputToken: 10, JoulesPerOutputToken: 50, JoulesPerTotalToken: 10000.0 / 1200},
			roles: RoleMetrics{PrefillGPUEnergyJ: ptr(3000), PrefillAvgPowerW: ptr(150), PrefillJoulesPerInputToken: ptr(3),
				DecodeGPUEnergyJ: ptr(7000), DecodeAvgPowerW: ptr(350), DecodeJoulesPerOutputToken: ptr(35)},
		},
		{
			name:    "two decode nodes sum into the role",
			nodes:   []NodeEnergy{{RolePrefill, []float64{500}}, {RoleDecode, []float64{1000}}, {RoleDecode, []float64{1500}}},
			prefill: 1, decode: 2,
			want: Metrics{AvgPowerW: 100, AvgTotalGPUPowerW: 300, TotalGPUEnergyJ: 3000, JoulesPerSuccessfulQuery: 750,
				JoulesPerInputToken: 3, JoulesPerOutputToken: 15, JoulesPerTotalToken: 2.5},
			roles: RoleMetrics{PrefillGPUEnergyJ: ptr(500), PrefillAvgPowerW: ptr(50), PrefillJoulesPerInputToken: ptr(0.5),
				DecodeGPUEnergyJ: ptr(2500), DecodeAvgPowerW: ptr(125), DecodeJoulesPerOutputToken: ptr(12.5)},
		},
		{
			name:    "a role without GPUs has no figures",
			nodes:   []NodeEnergy{{RolePrefill, []float64{600, 600}}},
			prefill: 2, decode: 0,
			want: Metrics{AvgPowerW: 60, AvgTotalGPUPowerW: 120, TotalGPUEnergyJ: 1200, JoulesPerSuccessfulQuery: 300,
				JoulesPerInputToken: 1.2, JoulesPerOutputToken: 6, JoulesPerTotalToken: 1},
			roles: RoleMetrics{PrefillGPUEnergyJ: ptr(1200), PrefillAvgPowerW: ptr(60), PrefillJoulesPerInputToken: ptr(1.2)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, r := SumNodes(w, tc.nodes, tc.prefill, tc.decode)
			got, want := m.named(), tc.want.named()
			for i := range want {
				if !near(got[i].v, want[i].v) {
					t.Errorf("%s = %v, want %v", want[i].key, got[i].v, want[i].v)
				}
			}
			gr, wr := r.named(), tc.roles.named()
			if len(gr) != len(wr) {
				t.Fatalf("role metrics %v, want %v", gr, wr)
			}
			for i := range wr {
				if gr[i].key != wr[i].key || !near(gr[i].v, wr[i].v) {
					t.Errorf("%s = %v, want %s = %v", gr[i].key, gr[i].v, wr[i].key, wr[i].v)
				}
			}
		})
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// multiNodeDir lays out a disaggregated point's result directory from the
// base-valid case (two NVIDIA GPUs; InferenceX's adapter found 4880.25 J
// over its 6.5 s window): the aiperf artifacts and offset file, and one
// node directory per name with the case's telemetry.
func multiNodeDir(t *testing.T, names ...string) string {
	t.Helper()
	src := filepath.Join("testdata", "cases", "base-valid")
	dir := t.TempDir()
	for _, f := range []string{OffsetFile, "aiperf_artifacts/profile_export.jsonl", "aiperf_artifacts/profile_export_aiperf.json"} {
		copyFile(t, filepath.Join(src, f), filepath.Join(dir, f))
	}
	for _, n := range names {
		copyFile(t, filepath.Join(src, TelemetryFile), filepath.Join(dir, "power", n, TelemetryFile))
	}
	return dir
}

// TestAdaptMultiNode runs the multi-node lane on two nodes whose telemetry
// is the base-valid case's: each node's energy is what InferenceX's
// single-node adapter computed on it (4880.25 J), and the sums follow.
func TestAdaptMultiNode(t *testing.T) {
	nodes := func(dir string) []NodeTelemetry {
		return []NodeTelemetry{
			{Name: "prefill0", Role: RolePrefill, Dir: filepath.Join(dir, "power", "prefill0"), GPUs: 2},
			{Name: "decode0", Role: RoleDecode, Dir: filepath.Join(dir, "power", "decode0"), GPUs: 2},
		}
	}
	t.Run("valid", func(t *testing.T) {
		dir := multiNodeDir(t, "prefill0", "decode0")
		f, out := AdaptMultiNode(MultiNodeOptions{ResultDir: dir, Nodes: nodes(dir), PrefillGPUs: 2, DecodeGPUs: 2, Zone: time.UTC})
		if !out.Valid || f.Valid != 1 {
			t.Fatalf("invalid: %v", out.Reasons)
		}
		data, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		// 9760.5 J = 2 x 4880.25 over 6.5 s, 4 GPUs; 3 requests, 83000
		// input and 605 output tokens. The integrated total is 9760.5
		// less a few µJ, so the query figure rounds to ...499999.
		want := `{"power_metric_schema_version":2,"power_valid":1,"avg_power_w":375.404,"avg_total_gpu_power_w":1501.615,` +
			`"total_gpu_energy_j":9760.5,"joules_per_successful_query":3253.499999,"joules_per_input_token":0.117596,` +
			`"joules_per_output_token":16.133058,"joules_per_total_token":0.116745,` +
			`"prefill_gpu_energy_j":4880.25,"prefill_avg_power_w":375.404,"prefill_joules_per_input_token":0.058798,` +
			`"decode_gpu_energy_j":4880.25,"decode_avg_power_w":375.404,"decode_joules_per_output_token":8.066529}`
		if string(data) != want {
			t.Errorf("fields\n got %s\nwant %s", data, want)
		}
		var side struct {
			Valid   bool               `json:"power_valid"`
			Roles   map[string]string  `json:"per_gpu_role"`
			Energy  map[string]float64 `json:"per_gpu_energy_j"`
			Metrics map[string]float64 `json:"metrics"`
		}
		readJSON(t, filepath.Join(dir, ValidationFile), &side)
		if !side.Valid || side.Roles["prefill0/1"] != RolePrefill || side.Roles["decode0/0"] != RoleDecode || len(side.Energy) != 4 {
			t.Errorf("sidecar: %+v", side)
		}
		if _, err := os.Stat(filepath.Join(dir, WindowFile)); err != nil {
			t.Error(err)
		}
	})
	for _, tc := range []struct {
		name            string
		present         []string
		prefill, decode int
		reasons         []string
	}{
		{"role GPU counts differ from the point's", []string{"prefill0", "decode0"}, 4, 2, []string{"topology_env_mismatch"}},
		{"a node without telemetry", []string{"prefill0"}, 2, 2, []string{"telemetry_file_missing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := multiNodeDir(t, tc.present...)
			f, out := AdaptMultiNode(MultiNodeOptions{ResultDir: dir, Nodes: nodes(dir), PrefillGPUs: tc.prefill, DecodeGPUs: tc.decode, Zone: time.UTC, RequirePower: true})
			if out.Valid || f.Valid != 0 || f.TotalGPUEnergyJ != nil || f.PrefillGPUEnergyJ != nil || out.ExitCode != 1 {
				t.Fatalf("valid %v, fields %+v, exit %d", out.Valid, f, out.ExitCode)
			}
			if !slices.Equal(out.Reasons, tc.reasons) {
				t.Errorf("reasons %v, want %v", out.Reasons, tc.reasons)
			}
		})
	}
}
