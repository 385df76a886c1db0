package loadgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sweep/configs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata goldens")

// smallTraces is the checked-in synthetic trace set (see testdata/README.md).
const smallTraces = "../testdata/traces/agentic-small.jsonl"

// wekaSample is a copy of the WEKA cc-traces sample from the aggregation
// conformance case vllm-tp4-mtp-conc16.
const wekaSample = "../testdata/loadgen/weka-sample/traces.jsonl"

func encodeTraces(t testing.TB, ts []Trace) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, tr := range ts {
		line, err := json.Marshal(tr)
		require.NoError(t, err)
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// TestSyntheticTracesGolden pins the built-in trace set: the file in
// testdata is exactly what SyntheticTraces generates (go test -update
// rewrites it).
func TestSyntheticTracesGolden(t *testing.T) {
	got := encodeTraces(t, SyntheticTraces(smallTraceSeed, smallTraceCount))
	if *update {
		require.NoError(t, os.WriteFile(smallTraces, got, 0o644))
	}
	want, err := os.ReadFile(smallTraces)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "SyntheticTraces drifted from %s; rerun with -update and review the diff", smallTraces)
	assert.Less(t, len(got), 200<<10, "the checked-in trace set must stay small")
}

func TestLoadTraces(t *testing.T) {
	tests := []struct {
		name       string
		path       string
		wantTraces int
	}{
		{"synthetic set", smallTraces, smallTraceCount},
		{"public WEKA sample", wekaSample, 16},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts, err := LoadTraces(tc.path)
			require.NoError(t, err)
			assert.Len(t, ts, tc.wantTraces)
			for _, tr := range ts {
				c := tr.Conversation(0)
				assert.NotEmpty(t, c.Turns, tr.ID)
			}
		})
	}
}

func TestLoadTracesDirectoryAndJSON(t *testing.T) {
	dir := t.TempDir()
	ts := SyntheticTraces(1, 3)
	for i, tr := range ts {
		b, err := json.MarshalIndent(tr, "", " ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "trace_"+string(rune('a'+i))+".json"), b, 0o644))
	}
	got, err := LoadTraces(dir)
	require.NoError(t, err)
	require.Len(t, got, 3)
	assert.Equal(t, ts[0].ID, got[0].ID)
}

func TestParseTracesErrors(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		{"1 bad json", "{\"id\":\"a\",\n", "in.jsonl:1: invalid"},
		{"2 no id", `{"block_size":64,"requests":[{"t":0,"type":"n","in":5,"out":1}]}`, `in.jsonl:1: trace has no "id"`},
		{"3 bad type", "\n" + `{"id":"x","block_size":64,"requests":[{"t":0,"type":"q","in":5}]}`, `in.jsonl:2: trace x: requests[0].type "q": want n, s or subagent`},
		{"4 zero input", `{"id":"x","block_size":64,"requests":[{"t":0,"type":"n","in":0}]}`, "in.jsonl:1: trace x: requests[0].in = 0: want > 0"},
		{"5 block size", `{"id":"x","requests":[{"t":0,"type":"n","in":3}]}`, "in.jsonl:1: trace x: block_size 0: want a positive integer"},
		{"6 subagent id", `{"id":"x","block_size":64,"requests":[{"t":0,"type":"subagent","requests":[]}]}`, "in.jsonl:1: trace x: requests[0]: subagent without agent_id"},
		{"7 empty", "\n\n", "in.jsonl: no traces"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTraces("in.jsonl", strings.NewReader(tc.input))
			require.Error(t, err)
			var te *configs.Error
			assert.True(t, errors.As(err, &te), "want *configs.Error, got %T", err)
			assert.True(t, strings.HasPrefix(err.Error(), tc.want), "got %q, want prefix %q", err, tc.want)
		})
	}
}

func TestConversationSubagentsAndDelays(t *testing.T) {
	tr := Trace{ID: "tr", BlockSize: 4, Requests: []TraceRequest{
		{T: 0, Type: "n", In: 10, Out: 2, HashIDs: []int64{1, 2, 3}, APITime: 1},
		{T: 2, Type: "subagent", AgentID: "agent_001", Requests: []TraceRequest{{T: 0, Type: "n", In: 5, Out: 1}}},
		{T: 9, Type: "n", In: 20, Out: 2, HashIDs: []int64{1, 2, 3, 4, 5}, APITime: 1},
		{T: 400, Type: "n", In: 30, Out: 2},
		{T: 401, Type: "s", In: 40, Out: 2, ThinkTime: 0.5},
	}}
	c := tr.Conversation(300)
	require.Len(t, c.Turns, 4)
	assert.Equal(t, 0.0, c.Turns[0].Delay)
	assert.Equal(t, 8.0, c.Turns[1].Delay, "end-to-start gap: 9 - (0 + 1)")
	assert.Equal(t, 300.0, c.Turns[2].Delay, "gap 390 capped at 300")
	assert.Equal(t, 0.5, c.Turns[3].Delay, "think_time wins; no api_time on the previous turn")
	require.Len(t, c.Children[1], 1, "the subagent runs before the next main turn")
	sub := c.Children[1][0]
	assert.Equal(t, "tr::sa:agent_001", sub.ID)
	assert.Equal(t, 1, sub.Depth)
	assert.Equal(t, 1, sub.Turns[0].OuterIndex)
	assert.Equal(t, 0, sub.Turns[0].InnerIndex)
	assert.Equal(t, 2, c.Turns[1].OuterIndex)
}

func mkdirCopy(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

// TestShippedTracesPassAiperfsModel: testdata/traces/agentic-small.jsonl
// lacked hash_id_scope and the subagent fields aiperf's WekaTrace requires,
// so a real aiperf refused it. Every trace set sweep ships or generates
// passes aiperf 0.12.0's model. (testdata/loadgen/weka-sample is
// InferenceX's aggregation fixture, kept unchanged, and replayed by the
// built-in client only.)
func TestShippedTracesPassAiperfsModel(t *testing.T) {
	shipped, err := filepath.Glob("../testdata/traces/*.jsonl")
	require.NoError(t, err)
	require.NotEmpty(t, shipped)
	for _, path := range shipped {
		f, err := os.Open(path)
		require.NoError(t, err)
		assert.NoError(t, CheckAiperfWeka(path, f))
		f.Close()
	}
	for name, ts := range map[string][]Trace{
		"SyntheticTraces": SyntheticTraces(smallTraceSeed, smallTraceCount),
		"AgenticTraces":   AgenticTraces(builtinTraceSeed, builtinTraceCount),
	} {
		assert.NoError(t, CheckAiperfWeka(name, bytes.NewReader(encodeTraces(t, ts))))
	}
}

// TestCheckAiperfWeka: what aiperf's model rejects is named with its line
// and field.
func TestCheckAiperfWeka(t *testing.T) {
	good := `{"id":"a","models":["m"],"block_size":64,"hash_id_scope":"local","requests":[{"t":0,"type":"n","model":"m","in":10,"out":2},` +
		`{"t":1,"type":"subagent","agent_id":"x","subagent_type":"Explore","status":"completed","models":["m"],"requests":[{"t":0,"type":"s","model":"m","input_length":5,"out":1,"ttft":0.1}]}]}`
	require.NoError(t, CheckAiperfWeka("good", strings.NewReader(good+"\n")))
	f, err := os.Open(wekaSample)
	require.NoError(t, err)
	defer f.Close()
	err = CheckAiperfWeka("sample", f)
	require.Error(t, err, "the InferenceX fixture predates the model")
	assert.Contains(t, err.Error(), "sample:1: hash_id_scope: required field missing (aiperf 0.12.0 WekaTrace)")
	assert.Contains(t, err.Error(), "requests[2].subagent_type: required field missing")
	assert.Contains(t, err.Error(), "requests[2].requests[0].model: required field missing")
	bad := `{"id":"a","models":["m"],"block_size":0,"hash_id_scope":"global","extra":1,"requests":[{"t":0,"type":"x"},{"t":0,"type":"subagent","agent_id":"x","subagent_type":"E","status":"c","models":["m"],"requests":[{"t":0,"type":"subagent"}]}]}`
	err = CheckAiperfWeka("bad", strings.NewReader("\n"+bad+"\n"))
	require.Error(t, err)
	for _, want := range []string{"bad:2: {extra}: extra fields not permitted", `hash_id_scope "global": want "local"`, "block_size 0: want a positive integer",
		`requests[0].type "x": want "n", "s" or "subagent"`, `requests[1].requests[0].type "subagent": want "n" or "s" (inside a subagent)`} {
		assert.Contains(t, err.Error(), want)
	}
}

// TestLongAgenticTracesRunOnPastTheCap: the long built-in set (the
// uncapped corpus's stand-in) keeps the capped set's per-turn shape but
// its sessions run about four times as far, up to the 1M limit, and the
// capped set is unchanged by its existence.
func TestLongAgenticTracesRunOnPastTheCap(t *testing.T) {
	stats := func(ts []Trace) (mean float64, most int) {
		var sum, n float64
		for _, tr := range ts {
			for _, r := range tr.Requests {
				if r.Type == "n" {
					sum += float64(r.In)
					n++
					most = max(most, r.In)
					assert.Len(t, r.HashIDs, (r.In+63)/64)
				}
			}
		}
		return sum / n, most
	}
	capped, cappedMax := stats(AgenticTraces(builtinTraceSeed, builtinTraceCount))
	long, longMax := stats(LongAgenticTraces(builtinTraceSeed, builtinTraceCount))
	assert.InDelta(t, 74_000, capped, 4_000)
	assert.LessOrEqual(t, cappedMax, 124_000)
	assert.InDelta(t, 4, long/capped, 0.5, "mean input %.0f against %.0f", long, capped)
	assert.Greater(t, longMax, 256_000, "the long set has requests the 256k cap drops")
	assert.LessOrEqual(t, longMax, 1_000_000)
	assert.NoError(t, CheckAiperfWeka("LongAgenticTraces", bytes.NewReader(encodeTraces(t, LongAgenticTraces(builtinTraceSeed, 8)))))
}
