package matrix

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAgenticRows(t *testing.T) {
	g := testGenerator(t, testMasters, testRunners)
	rows, keys, err := g.AgenticRows([]string{"m-*"}, []int{8}, EvalOptions{NoEvals: true})
	require.NoError(t, err)
	assert.Contains(t, keys, "m-agentic", "a pattern resolves to the keys it matches")
	require.NotEmpty(t, rows)
	for _, r := range rows {
		assert.Equal(t, "m-agentic", r.ConfigKey, "agentic-coding rows only")
		assert.Equal(t, 8, r.Conc)
	}

	_, _, err = g.AgenticRows([]string{"m-agentc"}, nil, EvalOptions{})
	var ke *KeyError
	require.True(t, errors.As(err, &ke), "%v", err)
	assert.Equal(t, "m-agentc", ke.Key)

	noHW := testGenerator(t, testMasters, "labels:\n  lab: [lab_0]\n  cluster:lab: [lab_0]\n")
	_, _, err = noHW.AgenticRows([]string{"m-agentic"}, nil, EvalOptions{})
	assert.ErrorContains(t, err, "the configs cannot run on their runners:\n")
}

func TestSelectArms(t *testing.T) {
	g := testGenerator(t, testMasters, testRunners)
	rows, _, err := g.AgenticRows([]string{"m-agentic"}, nil, EvalOptions{NoEvals: true})
	require.NoError(t, err)
	kept, arms := rows.SelectArms([]int{8}, nil, nil)
	assert.Equal(t, []string{"--tp 4 --ep 1", "--tp 8 --ep 1"}, arms, "every arm, in row order")
	require.NotEmpty(t, kept)
	for _, r := range kept {
		assert.Equal(t, 8, r.TP)
	}
	yes := true
	kept, _ = rows.SelectArms(nil, nil, &yes)
	assert.Empty(t, kept, "no DP-attention arm")
	kept, _ = rows.SelectArms(nil, nil, nil)
	assert.Len(t, kept, len(rows))
}

func TestSingleNodeRows(t *testing.T) {
	a, b := &Row{Conc: 1}, &Row{Conc: 2}
	c := &Changelog{SingleNode: []Bucket{{Name: "agentic", Rows: Matrix{a}}, {Name: "1k1k", Rows: Matrix{b}}}, MultiNode: []Bucket{{Name: "agentic", Rows: Matrix{b}}}}
	assert.Equal(t, Matrix{a}, c.SingleNodeRows("agentic"), "single-node rows only")
	assert.Nil(t, c.SingleNodeRows("8k1k"))
}

func TestWriteJSON(t *testing.T) {
	g := testGenerator(t, testMasters, testRunners)
	rows, _, err := g.AgenticRows([]string{"m-agentic"}, []int{1}, EvalOptions{NoEvals: true})
	require.NoError(t, err)
	var plain, keyed strings.Builder
	require.NoError(t, rows.WriteJSON(&plain, false))
	require.NoError(t, rows.WriteJSON(&keyed, true))
	assert.Equal(t, string(rows.AppendJSON(nil))+"\n", plain.String())
	assert.Equal(t, string(rows.AppendJSON(nil, WithConfigKey()))+"\n", keyed.String())
	assert.Contains(t, keyed.String(), `"config-key": "m-agentic"`)
}

// TestAtConc: an arm's row moved to another of its concurrencies is the
// row the generator makes there (exp-name included), unstamped.
func TestAtConc(t *testing.T) {
	g := testGenerator(t, testMasters, testRunners)
	rows, _, err := g.AgenticRows([]string{"m-agentic"}, nil, EvalOptions{NoEvals: true})
	require.NoError(t, err)
	var lo, hi *Row
	for _, r := range rows {
		if r.Kind == AgenticSingleNode && r.TP == rows[0].TP && r.KVOffloading == rows[0].KVOffloading && r.Runner == rows[0].Runner {
			if lo == nil || r.Conc < lo.Conc {
				lo = r
			}
			if hi == nil || r.Conc > hi.Conc {
				hi = r
			}
		}
	}
	require.NotEqual(t, lo.Conc, hi.Conc, "the arm has two concurrencies")
	lo.StampFingerprint()
	at := lo.AtConc(hi.Conc)
	assert.Equal(t, hi, at)
	assert.NotEqual(t, hi.Conc, lo.Conc, "the row moved is a copy")
	assert.Contains(t, at.ExpName, "_conc"+strconv.Itoa(hi.Conc)+"_")
}

// TestSelectPoint: the rows of one point that differ in KV offloading are
// never taken silently (the first row was: the kv:none one); kv picks
// each, a point of one KV offloading needs none, and KVPicks names kv
// only where a point needs it.
func TestSelectPoint(t *testing.T) {
	row := func(conc int, kv, name string) *Row { return &Row{Conc: conc, KVOffloading: kv, ExpName: name} }
	m := Matrix{row(32, "none", "c32-none"), row(32, "dram", "c32-dram"), row(40, "dram", "c40-dram"), row(8, "none", "c8-a"), row(8, "none", "c8-b")}
	at := func(conc int) func(*Row) bool { return func(r *Row) bool { return r.Conc == conc } }
	tests := []struct {
		name   string
		conc   int
		kv     string
		want   string   // the row's ExpName
		choice []string // the rows of a *KVChoiceError
	}{
		{"rows that differ in kv are a choice", 32, "", "", []string{"c32-none", "c32-dram"}},
		{"kv none picks its row", 32, "none", "c32-none", nil},
		{"kv dram picks its row", 32, "dram", "c32-dram", nil},
		{"a point of one row needs no kv", 40, "", "c40-dram", nil},
		{"rows of one kv: the first", 8, "", "c8-a", nil},
		{"no row of that kv", 40, "none", "", nil},
		{"no row at the point", 16, "", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := m.SelectPoint(at(tc.conc), tc.kv)
			if tc.choice != nil {
				c, ok := errors.AsType[*KVChoiceError](err)
				require.True(t, ok, "got %v, %v; want a *KVChoiceError", r, err)
				var names []string
				for _, r := range c.Rows {
					names = append(names, r.ExpName)
				}
				assert.Equal(t, tc.choice, names)
				assert.Nil(t, r)
				return
			}
			require.NoError(t, err)
			if tc.want == "" {
				assert.Nil(t, r)
				return
			}
			require.NotNil(t, r)
			assert.Equal(t, tc.want, r.ExpName)
		})
	}

	picks := m.KVPicks(func(r *Row) string { return strconv.Itoa(r.Conc) })
	var got []string
	for _, r := range m {
		got = append(got, picks(r))
	}
	assert.Equal(t, []string{"none", "dram", "", "", ""}, got)
}
