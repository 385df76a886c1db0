package configs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRunnersRules(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []wantErr
	}{
		{name: "valid", doc: "labels:\n  b200: [b200-a, b200-b]\nhardware:\n  cluster:b200:\n    available-cpu-dram-mib: 3_095_781\n    gpus-per-node: 8\n"},
		{name: "valid without hardware", doc: "labels:\n  b200: [b200-a]\n"},
		{name: "flat config without labels", doc: "b200:\n  - b200-a\n",
			want: []wantErr{{1, "b200", `unknown key "b200"; allowed keys here: labels, hardware`}, {1, "labels", "required key is missing"}}},
		{name: "label value not a list", doc: "labels:\n  b200: b200-a\n",
			want: []wantErr{{2, "labels.b200", "must be a list, got a string"}}},
		{name: "label list empty", doc: "labels:\n  b200: []\n",
			want: []wantErr{{2, "labels.b200", "at least one runner name"}}},
		{name: "label list with a number", doc: "labels:\n  b200: [b200-a, 7]\n",
			want: []wantErr{{2, "labels.b200[1]", "must be a string"}}},
		{name: "duplicate label", doc: "labels:\n  b200: [a]\n  b200: [b]\n",
			want: []wantErr{{3, "labels.b200", "duplicate key (first defined at line 2)"}}},
		{name: "hardware extra key", doc: "labels:\n  b200: [a]\nhardware:\n  b200: {available-cpu-dram-mib: 1, gpus-per-node: 8, cpus: 4}\n",
			want: []wantErr{{4, "hardware.b200.cpus", `unknown key "cpus"`}}},
		{name: "hardware dram not positive", doc: "labels:\n  b200: [a]\nhardware:\n  b200: {available-cpu-dram-mib: 0, gpus-per-node: 8}\n",
			want: []wantErr{{4, "hardware.b200.available-cpu-dram-mib", "must be > 0"}}},
		{name: "hardware gpus-per-node not positive", doc: "labels:\n  b200: [a]\nhardware:\n  b200: {available-cpu-dram-mib: 10, gpus-per-node: 0}\n",
			want: []wantErr{{4, "hardware.b200.gpus-per-node", "must be >= 1"}}},
		{name: "hardware field missing", doc: "labels:\n  b200: [a]\nhardware:\n  b200: {gpus-per-node: 8}\n",
			want: []wantErr{{4, "hardware.b200.available-cpu-dram-mib", "required key is missing"}}},
		{name: "top-level extra key", doc: "labels:\n  b200: [a]\nowners: [x]\n",
			want: []wantErr{{3, "owners", `unknown key "owners"`}}},
		{name: "not a mapping", doc: "[a, b]\n",
			want: []wantErr{{1, "", "must be a mapping"}}},
		{name: "empty file", doc: "",
			want: []wantErr{{1, "", "runner config is empty"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRunners(Source{Name: "runners.yaml", Data: []byte(tc.doc)})
			assertErrors(t, "runners.yaml", err, tc.want)
			if len(tc.want) == 0 {
				require.NotNil(t, r)
			}
		})
	}
}

func TestParseRunnersValues(t *testing.T) {
	r, err := ParseRunners(Source{Name: "r.yaml", Data: []byte("labels:\n  z: [z1, z0]\n  a: [a0]\nhardware:\n  cluster:z:\n    available-cpu-dram-mib: 3_091_589\n    gpus-per-node: 4\n")})
	require.NoError(t, err)
	assert.Equal(t, []string{"z", "a"}, r.LabelOrder)
	names, ok := r.Runner("z")
	assert.True(t, ok)
	assert.Equal(t, []string{"z1", "z0"}, names)
	assert.Equal(t, Hardware{AvailableCPUDRAMMiB: 3091589, GPUsPerNode: 4}, r.Hardware["cluster:z"])
	assert.Equal(t, Pos{File: "r.yaml", Line: 5, Col: 3}, r.HardwarePos["cluster:z"])
}

func TestGPUOfRunner(t *testing.T) {
	for runner, want := range map[string]string{
		"cluster:mi325x-amds": "mi325x",
		"mi325x-amds_03":      "mi325x",
		"h200":                "h200",
		"cluster:b200-dgxc":   "b200",
		"b200_1":              "b200",
	} {
		assert.Equal(t, want, GPUOfRunner(runner), runner)
	}
}
