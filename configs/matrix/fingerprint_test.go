package matrix

import (
	"math/big"
	"slices"
	"sweep/configs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every row key and worker key has a distinct name, and the sort_keys
// orders list each once.
func TestFieldTables(t *testing.T) {
	names := map[string]bool{}
	for f, d := range rowFields {
		assert.NotEmpty(t, d.name, "field %d has no name", f)
		assert.NotNil(t, d.value, "field %s has no value", d.name)
		assert.False(t, names[d.name], "duplicate key %s", d.name)
		names[d.name] = true
	}
	sorted := make([]string, len(sortedFields))
	for i, f := range sortedFields {
		sorted[i] = rowFields[f].name
	}
	assert.True(t, slices.IsSorted(sorted), "%v", sorted)
	assert.Len(t, sorted, int(numFields))
	wsorted := make([]string, len(workerSorted))
	for i, k := range workerSorted {
		wsorted[i] = workerFields[k].name
	}
	assert.Equal(t, []string{"additional-settings", "dcp-size", "dp-attn", "ep", "hardware", "num-worker", "pcp-size", "pp", "tp"}, wsorted)
	for _, order := range [][]field{pythonOrder[FixedSingleNode], pythonOrder[FixedMultiNode], pythonOrder[AgenticSingleNode], pythonOrder[AgenticMultiNode],
		pydanticOrder[FixedSingleNode], pydanticOrder[FixedMultiNode], pydanticOrder[AgenticSingleNode], pydanticOrder[AgenticMultiNode]} {
		seen := map[field]bool{}
		for _, f := range order {
			assert.False(t, seen[f], "%s twice in an order", rowFields[f].name)
			seen[f] = true
		}
	}
}

func TestCanonicalJSON(t *testing.T) {
	v := map[string]any{
		"b": []any{1, 2.0, nil, true},
		"a": map[string]any{"ü": "é😀\x7f\n", "A": 0.8},
		"":  "x",
	}
	got, err := CanonicalJSON(v)
	require.NoError(t, err)
	// json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
	assert.Equal(t, `{"":"x","a":{"A":0.8,"\u00fc":"\u00e9\ud83d\ude00\u007f\n"},"b":[1,2.0,null,true]}`, string(got))

	_, err = CanonicalJSON(map[int]int{1: 1})
	assert.Error(t, err, "non-string map keys cannot be encoded")
	_, err = CanonicalJSON(make(chan int))
	assert.Error(t, err)
}

// The expected fingerprint is process_changelog.recipe_fingerprint of the
// same row as a dict, computed with InferenceX's code.
func TestFingerprint(t *testing.T) {
	r := &Row{
		Kind: FixedSingleNode, Image: "img/a:1", Model: "org/model-ü", ModelPrefix: "zzc",
		Precision: "fp8", Framework: "sglang", Runner: "cluster:b200-dgxc", SpecDecoding: "mtp",
		ISL: 8192, OSL: 1024, MaxModelLen: 9472, Parallelism: configs.Parallelism{TP: 4, PP: 1, DCPSize: 1, PCPSize: 1, EP: 1},
		Conc: 4, ExpName: "zzc_8k1k", RunEval: ptr(false),
		Router: &configs.Component{Name: "sglang-router", Version: "0.2.1"},
	}
	const want = "646fb66eae107c80529e34248f1e3aa1170d166a76f935ec32538b18eccd48dd"
	assert.Equal(t, want, Fingerprint(r))
	other := r.Clone()
	other.Conc, other.ExpName, other.RecipeFingerprint = 64, "renamed", want
	assert.Equal(t, want, Fingerprint(other), "conc, exp-name and the fingerprint itself do not count")
	other.EP = 2
	assert.NotEqual(t, want, Fingerprint(other))

	// A stamp is kept (a changelog row carries InferenceX's); an unstamped
	// row is stamped with its fingerprint.
	assert.Equal(t, want, other.StampedFingerprint(), "the stamp wins")
	other.StampFingerprint()
	assert.Equal(t, want, other.RecipeFingerprint)
	fresh := r.Clone()
	fresh.RecipeFingerprint = ""
	assert.Equal(t, want, fresh.StampedFingerprint())
	assert.Empty(t, fresh.RecipeFingerprint, "StampedFingerprint does not stamp")
	fresh.StampFingerprint()
	assert.Equal(t, want, fresh.RecipeFingerprint)
}

func TestDecRound(t *testing.T) {
	rat := func(s string) *big.Rat {
		r, ok := new(big.Rat).SetString(s)
		require.True(t, ok, s)
		return r
	}
	tests := []struct{ in, want string }{
		{"1/3", "0.3333333333333333333333333333"},
		{"2/3", "0.6666666666666666666666666667"},
		{"1.0000000000000000000000000005", "1"},                             // half to even: down
		{"1.0000000000000000000000000015", "1.000000000000000000000000002"}, // half to even: up
		{"123456789012345678901234567890", "123456789012345678901234567900"},
		{"-2/3", "-0.6666666666666666666666666667"},
		{"0", "0"},
		{"42", "42"},
	}
	for _, tc := range tests {
		in := rat(tc.in)
		got := decRound(in.Num(), in.Denom(), 0).rat()
		assert.Zero(t, got.Cmp(rat(tc.want)), "decRound(%s) = %s, want %s", tc.in, got.FloatString(30), tc.want)
	}
}

// Expected values are InferenceX's agentic_dram_offload_gb arithmetic
// (Python decimal) for the same inputs.
func TestDramGB(t *testing.T) {
	tests := []struct {
		mib         int64
		util        float64
		gpus, nodes int
		want        int
	}{
		{3095781, 0.7, 4, 8, 1049},
		{3095781, 0.33, 6, 8, 742},
		{860160, 0.8, 4, 4, 721},
		{2063837, 0.6, 1, 8, 162},
		{1471356, 0.123456789012345, 3, 8, 71},
		{2861022, 1.0, 8, 8, 2999},
		{1000, 0.1, 1, 3, 0},
		{2861022, 0.9999999999999999, 7, 8, 2624},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, dramGB(min(tc.mib, maxAgenticDRAMMiB), tc.util, tc.gpus, tc.nodes), "%+v", tc)
	}
}
