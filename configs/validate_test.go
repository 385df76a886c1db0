package configs

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/configs")

// plantedMasters is configs/amd-master.yaml with three planted mistakes.
const plantedMasters = "testdata/configs/planted/amd-master.yaml"

// TestValidatePlantedMistakes is the acceptance scenario: a master file
// with three mistakes (an unknown key, conc-start > conc-end, an agentic
// config on a non-cluster runner) gets all three reported with positions.
func TestValidatePlantedMistakes(t *testing.T) {
	amd := readTestdata(t, strings.TrimPrefix(plantedMasters, "testdata/"))
	nvidia, err := os.ReadFile("nvidia-master.yaml")
	require.NoError(t, err)
	runners, err := os.ReadFile("runners.yaml")
	require.NoError(t, err)
	rep := Validate(ValidateInput{
		Masters: []Source{{Name: plantedMasters, Data: amd}, {Name: "configs/nvidia-master.yaml", Data: nvidia}},
		Runners: Source{Name: "configs/runners.yaml", Data: runners},
	})
	require.Len(t, rep.Problems, 3)
	var got strings.Builder
	for _, p := range rep.Problems {
		got.WriteString(p.Error() + "\n")
	}
	golden := filepath.Join(testdataDir, "configs/planted/validate.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(got.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), got.String())

	assert.Equal(t, 20, rep.Problems[0].Line)
	assert.Contains(t, rep.Problems[0].Msg, "conc-start (128) must be <= conc-end (64)")
	assert.Equal(t, "qwen3.5-fp8-mi325x-sglang-agentic-mtp.model-prefx", rep.Problems[1].Key)
	assert.Equal(t, "qwen3.5-fp8-mi325x-sglang-agentic-mtp.runner", rep.Problems[2].Key)
}

func TestValidate(t *testing.T) {
	runners := Source{Name: "runners.yaml", Data: []byte("labels:\n  cluster:x: [x0]\nhardware:\n  cluster:x: {available-cpu-dram-mib: 1000000, gpus-per-node: 8}\n")}
	masters := func(ss string) []Source {
		return []Source{{Name: "m.yaml", Data: []byte(agenticDoc("cluster:x", "dram-utilization: 0.5", ss))}}
	}
	okMasters := masters("{tp: 8, kv-offloading: none, conc-list: [1]}")
	changelog := func(keys ...string) *Source {
		var b strings.Builder
		b.WriteString("- config-keys:\n")
		for _, k := range keys {
			b.WriteString("    - " + k + "\n")
		}
		b.WriteString("  description:\n    - \"x\"\n  pr-link: XXX\n")
		return &Source{Name: "c.yaml", Data: []byte(b.String())}
	}
	tests := []struct {
		name string
		in   ValidateInput
		want []string // printed problems, prefix match
	}{
		{name: "valid", in: ValidateInput{Masters: okMasters, Runners: runners, Changelog: changelog("k", `"*"`)}},
		{name: "runner without hardware for dram offload",
			in:   ValidateInput{Masters: []Source{{Name: "m.yaml", Data: []byte(agenticDoc("cluster:y", "dram-utilization: 0.5", "{tp: 8, kv-offloading: dram, kv-offload-backend: {name: hicache}, conc-list: [1]}"))}}, Runners: runners},
			want: []string{`m.yaml:13:21: ` + agPath + `.kv-offloading: kv-offloading: dram needs hardware facts for the entry's runner (runner: "cluster:y" at m.yaml:5:11), but runners.yaml has no hardware entry for "cluster:y"`}},
		{name: "topology larger than a node",
			in:   ValidateInput{Masters: masters("{tp: 8, pp: 2, kv-offloading: dram, kv-offload-backend: {name: hicache}, conc-list: [1]}"), Runners: runners},
			want: []string{"m.yaml:13:13: " + agPath + `.tp: tp*pp*pcp-size = 8*2*1 = 16 GPUs does not fit one node of the entry's runner (runner: "cluster:x" at m.yaml:5:11; hardware entry at runners.yaml:4:3: gpus-per-node 8)`}},
		{name: "tp 16 without offload does not fit either",
			in:   ValidateInput{Masters: masters("{tp: 16, kv-offloading: none, conc-list: [1]}"), Runners: runners},
			want: []string{"m.yaml:13:13: " + agPath + ".tp: tp*pp*pcp-size = 16*1*1 = 16 GPUs does not fit one node"}},
		{name: "pcp-size counts, dcp-size does not",
			in:   ValidateInput{Masters: masters("{tp: 8, dcp-size: 8, pcp-size: 2, kv-offloading: none, conc-list: [1]}"), Runners: runners},
			want: []string{"m.yaml:13:13: " + agPath + ".tp: tp*pp*pcp-size = 8*1*2 = 16 GPUs does not fit one node"}},
		// tp 3 uses 3 of the node's 8 GPUs: it fits, and InferenceX sizes
		// its offload as 3/8 of the node. Only the model's head count could
		// refuse it, and that is no config fact.
		{name: "tp 3 fits a node of 8", in: ValidateInput{Masters: masters("{tp: 3, ep: 3, dp-attn: true, kv-offloading: none, conc-list: [1]}"), Runners: runners}},
		{name: "dcp-size and dp-attn use the tp GPUs", in: ValidateInput{Masters: masters("{tp: 8, dcp-size: 8, ep: 8, dp-attn: true, kv-offloading: none, conc-list: [1]}"), Runners: runners}},
		{name: "ep must divide tp",
			in:   ValidateInput{Masters: masters("{tp: 8, ep: 3, kv-offloading: none, conc-list: [1]}"), Runners: runners},
			want: []string{"m.yaml:13:13: " + agPath + ".ep: ep (3) must divide tp (8)"}},
		{name: "fixed-seq entries are checked too",
			in:   ValidateInput{Masters: []Source{{Name: "m.yaml", Data: []byte(strings.Replace(fixedDoc("{tp: 16, conc-list: [1]}"), "runner: mi355x", "runner: cluster:x", 1))}}, Runners: runners},
			want: []string{"m.yaml:14:13: " + ssPath + ".tp: tp*pp*pcp-size = 16*1*1 = 16 GPUs does not fit one node"}},
		{name: "a runner without hardware facts is not sized", in: ValidateInput{Masters: []Source{{Name: "m.yaml", Data: []byte(fixedDoc("{tp: 16, conc-list: [1]}"))}}, Runners: runners}},
		{name: "unknown config key with suggestion",
			in:   ValidateInput{Masters: okMasters, Runners: runners, Changelog: changelog("kk")},
			want: []string{`c.yaml:2:7: entry[1].config-keys: config key "kk" is not defined in the master configs (m.yaml)`}},
		{name: "wildcard matching nothing",
			in:   ValidateInput{Masters: okMasters, Runners: runners, Changelog: changelog("dsr1-*")},
			want: []string{`c.yaml:2:7: entry[1].config-keys: wildcard "dsr1-*" matches no key`}},
		{name: "scenario-type selecting nothing",
			in: ValidateInput{Masters: okMasters, Runners: runners, Changelog: &Source{Name: "c.yaml", Data: []byte(
				"- config-keys: [k]\n  scenario-type: [fixed-seq-len]\n  description: [x]\n  pr-link: XXX\n")}},
			want: []string{"c.yaml:1:3: entry[1].scenario-type: scenario-type fixed-seq-len selects nothing"}},
		{name: "problems in every file are collected",
			in: ValidateInput{
				Masters:   masters("{tp: 8, kv-offloading: none, conc-list: [0]}"),
				Runners:   Source{Name: "runners.yaml", Data: []byte("labels:\n  x: []\n")},
				Changelog: &Source{Name: "c.yaml", Data: []byte("- config-keys: [k]\n  description: [x]\n")},
			},
			want: []string{
				"m.yaml:13:54: k.scenarios.agentic-coding[0].search-space[0].conc-list[0]: concurrency must be > 0",
				"runners.yaml:2:6: labels.x: runner label must list at least one runner name",
				"c.yaml:1:3: entry[1].pr-link: required key is missing",
			}},
		// A broken master entry does not hide the changelog's problems,
		// and its key still counts as defined.
		{name: "unknown changelog key reported with master problems",
			in: ValidateInput{
				Masters:   masters("{tp: 8, kv-offloading: none, conc-list: [0]}"),
				Runners:   runners,
				Changelog: changelog("k", "kk", "k*"),
			},
			want: []string{
				"m.yaml:13:54: k.scenarios.agentic-coding[0].search-space[0].conc-list[0]: concurrency must be > 0",
				`c.yaml:3:7: entry[1].config-keys: config key "kk" is not defined in the master configs (m.yaml); did you mean "k"?`,
			}},
		{name: "append-only rules with a base",
			in: ValidateInput{Masters: okMasters, Runners: runners,
				Changelog:     &Source{Name: "c.yaml", Data: []byte("- config-keys: [k]\n  description: [y]\n  pr-link: XXX\n")},
				ChangelogBase: &Source{Name: "base.yaml", Data: []byte("- config-keys: [k]\n  description: [x]\n  pr-link: XXX\n")}},
			want: []string{`base.yaml:2:1: line deleted or rewritten in head c.yaml: "  description: [x]"`, "c.yaml:2:1: line inserted among historical entries"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := Validate(tc.in)
			var got []string
			for _, p := range rep.Problems {
				got = append(got, p.Error())
			}
			require.Len(t, got, len(tc.want), "got:\n%s", strings.Join(got, "\n"))
			for i := range tc.want {
				assert.True(t, strings.HasPrefix(got[i], tc.want[i]), "problem %d\n got: %s\nwant: %s...", i, got[i], tc.want[i])
			}
			assert.Equal(t, len(tc.want) == 0, rep.OK())
		})
	}
}

func TestValidateCounts(t *testing.T) {
	data, err := os.ReadFile("../perf-changelog.yaml")
	require.NoError(t, err)
	srcs, err := ReadSources(nil, DefaultMasterFiles)
	require.NoError(t, err)
	runners, err := ReadSources(nil, []string{DefaultRunnerFile})
	require.NoError(t, err)
	head := Source{Name: "perf-changelog.yaml", Data: data}
	rep := Validate(ValidateInput{Masters: srcs, Runners: runners[0], Changelog: &head})
	require.True(t, rep.OK(), "%v", rep.Problems)
	assert.Equal(t, 208, rep.MasterEntries)
	assert.Equal(t, 37, rep.RunnerLabels)
	assert.Equal(t, rep.ChangelogEntries, rep.NewEntries)

	rep = Validate(ValidateInput{Masters: srcs, Runners: runners[0], Changelog: &head, ChangelogBase: &head})
	require.True(t, rep.OK(), "%v", rep.Problems)
	assert.Zero(t, rep.NewEntries)
}

func TestMatchWildcard(t *testing.T) {
	tests := []struct {
		pattern, key string
		want         bool
	}{
		{"dsr1-*", "dsr1-fp4-mi355x-sglang", true},
		{"*gb200-dynamo-sglang", "dsr1-fp4-gb200-dynamo-sglang", true},
		{"*gb200-dynamo-sglang", "dsr1-fp4-gb200-dynamo-sglang-mtp", false},
		{"dsr1-*-mi355x-*", "dsr1-fp4-mi355x-sglang", true},
		{"dsr1-*-mi355x-*", "dsr1-fp4-mi300x-sglang", false},
		{"*", "anything", true},
		{"a*a", "a", false},
		{"a*a", "aa", true},
		{"exact", "exact", true},
		{"exact", "exactly", false},
		{"dsr1.*", "dsr1-fp4", false}, // '.' is literal, not a regex
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, MatchWildcard(tc.pattern, tc.key), "%q vs %q", tc.pattern, tc.key)
	}
}

// BenchmarkLoadMasters measures loading and checking both shipped master
// files (about 10,000 lines).
func BenchmarkLoadMasters(b *testing.B) {
	for b.Loop() {
		m, err := LoadMasters("amd-master.yaml", "nvidia-master.yaml")
		if err != nil || len(m.Entries) != 208 {
			b.Fatalf("load: %v", err)
		}
	}
}

// TestValidatePointsAtTheKey: in block-style entries (as the shipped
// configs are written), a problem names the line and column of the key
// that is wrong, not its search-space entry's first line or the line
// next to it.
func TestValidatePointsAtTheKey(t *testing.T) {
	runners := Source{Name: "runners.yaml", Data: []byte("labels:\n  cluster:mi355x-amds: [a0]\n  cluster:mi325x-nohw: [b0]\n" +
		"hardware:\n  cluster:mi355x-amds: {available-cpu-dram-mib: 1000000, gpus-per-node: 8}\n")}
	for _, tc := range []struct {
		file, want string
	}{
		{"dram-no-hardware.yaml", `dram-no-hardware.yaml:16:13: dram-no-hardware.scenarios.agentic-coding[0].search-space[0].kv-offloading: kv-offloading: dram needs hardware facts`},
		{"prefill-no-tile.yaml", `prefill-no-tile.yaml:19:13: prefill-no-tile.scenarios.agentic-coding[0].search-space[0].prefill: prefill worker uses tp*pp*pcp-size = 3 GPUs, which does not tile nodes`},
		{"disagg-no-p2p.yaml", `disagg-no-p2p.yaml:9:3: disagg-no-p2p.disagg: disagg: true requires kv-p2p-transfer at the top level or in every search-space entry; the search-space entry at line 14 has none`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data := readTestdata(t, "configs/positions/"+tc.file)
			rep := Validate(ValidateInput{Masters: []Source{{Name: tc.file, Data: data}}, Runners: runners})
			require.Len(t, rep.Problems, 1, "%v", rep.Problems)
			assert.True(t, strings.HasPrefix(rep.Problems[0].Error(), tc.want), "got:  %s\nwant: %s", rep.Problems[0].Error(), tc.want)
		})
	}
}
