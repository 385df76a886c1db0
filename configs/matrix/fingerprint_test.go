package matrix

import (
	"math/big"
	"slices"
	"sweep/configs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSortedFieldsFollowPythonSortKeys(t *testing.T) {
	names := make([]string, len(sortedFields))
	for i, f := range sortedFields {
		names[i] = fieldNames[f]
	}
	assert.True(t, slices.IsSorted(names), "sortedFields out of order: %v", names)
	assert.Len(t, names, int(numFields), "sortedFields must list every field once")
	seen := map[field]bool{}
	for _, f := range sortedFields {
		assert.False(t, seen[f], "duplicate %s", fieldNames[f])
		seen[f] = true
	}
	wnames := make([]string, len(workerSorted))
	for i, k := range workerSorted {
		wnames[i] = workerKeyNames[k]
	}
	assert.True(t, slices.IsSorted(wnames), "workerSorted out of order: %v", wnames)
	assert.Len(t, wnames, len(workerKeyNames))
}

func TestAppendString(t *testing.T) {
	tests := []struct {
		name, in, ascii, utf8 string
	}{
		{"plain", "lmsysorg/sglang:v0.5.16", `"lmsysorg/sglang:v0.5.16"`, `"lmsysorg/sglang:v0.5.16"`},
		{"html characters stay", "<a&b>", `"<a&b>"`, `"<a&b>"`},
		{"quote and backslash", `say "hi" \ bye`, `"say \"hi\" \\ bye"`, `"say \"hi\" \\ bye"`},
		{"short escapes", "a\nb\rc\td\be\ff", `"a\nb\rc\td\be\ff"`, `"a\nb\rc\td\be\ff"`},
		{"other control characters", "\x00\x01\x1f", `"\u0000\u0001\u001f"`, `"\u0000\u0001\u001f"`},
		{"DEL is escaped only in ASCII mode", "\x7f", `"\u007f"`, "\"\x7f\""},
		{"latin-1", "model-ü", `"model-\u00fc"`, `"model-ü"`},
		{"BMP", "✓", `"\u2713"`, `"✓"`},
		{"astral plane as surrogate pair", "😀", `"\ud83d\ude00"`, `"😀"`},
		{"invalid UTF-8", "a\xffb", `"a\ufffdb"`, "\"a\ufffdb\""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.ascii, string(appendString(nil, tc.in, true)), "ensure_ascii=True of %q", tc.in)
			assert.Equal(t, tc.utf8, string(appendString(nil, tc.in, false)), "UTF-8 output of %q", tc.in)
		})
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
		ISL: 8192, OSL: 1024, MaxModelLen: 9472, TP: 4, PP: 1, DCPSize: 1, PCPSize: 1, EP: 1,
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
		got := decRound(rat(tc.in))
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
		assert.Equal(t, tc.want, dramGBDecimal(min(tc.mib, maxAgenticDRAMMiB), tc.util, tc.gpus, tc.nodes), "%+v", tc)
	}
	// The integer fast path agrees with the decimal emulation wherever it
	// applies.
	exact := 0
	for _, mib := range []int64{1, 999, 860160, 1471356, 2063837, 2861022} {
		for _, util := range []float64{0.086, 0.1065, 0.15239, 0.2, 0.21429, 0.5, 0.683, 0.8, 0.887, 0.95, 1, 1e-05, 0.9999999999999999} {
			for _, nodes := range []int{3, 4, 8} {
				for gpus := 1; gpus <= nodes; gpus++ {
					if got, ok := dramGBExact(mib, util, gpus, nodes); ok {
						exact++
						assert.Equal(t, dramGBDecimal(mib, util, gpus, nodes), got, "mib=%d util=%v gpus=%d/%d", mib, util, gpus, nodes)
					}
				}
			}
		}
	}
	assert.Greater(t, exact, 100, "the fast path should cover most inputs")
}

func TestPlainASCII(t *testing.T) {
	naive := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	}
	base := []byte("abcdefghijklmnopqrstu")
	for pos := range base {
		for c := range 256 {
			s := append([]byte(nil), base...)
			s[pos] = byte(c)
			for _, n := range []int{pos + 1, len(s)} {
				if got, want := plainASCII(string(s[:n])), naive(string(s[:n])); got != want {
					t.Fatalf("plainASCII(%q) = %v, want %v", s[:n], got, want)
				}
			}
		}
	}
}
