package aiperf

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// skimValid is the skimmer's verdict on a whole document.
func skimValid(b []byte) bool {
	s := &skim{b: b}
	if !s.value(0) {
		return false
	}
	s.ws()
	return s.i == len(b)
}

// The skimmer's verdict is encoding/json's on the cases its grammar
// turns on.
func TestSkimValid(t *testing.T) {
	for _, in := range []string{
		`0`, `-0`, `01`, `-`, `1.`, `.5`, `1.5e`, `1.5e+3`, `1E-0`, `-12.25e10`, `1x`, `[1,]`, `[,1]`, `{}`, `[]`, ` { } `,
		`{"a":1,}`, `{"a" 1}`, `{1:2}`, `{"a":1 "b":2}`, `[1 2]`, `"\u00e9"`, `"\u00g9"`, `"\x"`, `"a\/b\"c\\"`, "\"tab\there\"",
		`"unterminated`, `tru`, `true`, `nul`, `null`, `falsey`, `[[[]]]`, `[[[]]`, `{"a":{"b":[1,{"c":null}]}}`, "\"\xff\xfe\"", ``, ` `,
	} {
		assert.Equal(t, json.Valid([]byte(in)), skimValid([]byte(in)), "%q", in)
	}
	deep := strings.Repeat("[", maxSkimDepth+1) + strings.Repeat("]", maxSkimDepth+1)
	assert.False(t, skimValid([]byte(deep)), "deeper than the skimmer follows: the decoder's path decides")
}

// Every shipped export loses its timeslices and reads the same.
func TestWithoutTimeslicesReadsTheSame(t *testing.T) {
	checked := 0
	for _, f := range shippedExports(t) {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		if !strings.Contains(string(data), `"timeslices"`) {
			continue
		}
		checked++
		skimmed, ok := withoutTimeslices(data)
		require.True(t, ok, f)
		assert.Less(t, len(skimmed), len(data), f)
		assert.NotContains(t, string(skimmed), `"timeslices": [`, f)
		want, ok := decodeServerMetrics(data, f)
		require.True(t, ok, f)
		got, ok := decodeServerMetrics(skimmed, f)
		require.True(t, ok, f)
		assert.Equal(t, want, got, f)
	}
	assert.GreaterOrEqual(t, checked, 2, "exports with timeslices (a real aiperf one among them)")
}

// Only a series object's own "timeslices" member goes, and only when all
// that is passed over is valid JSON.
func TestWithoutTimeslices(t *testing.T) {
	cases := []struct {
		name, in, want string // want "" : refused
	}{
		{"series member", `{"metrics": {"a": {"series": [{"stats": {"avg": 1}, "timeslices": [{"x": 1}, {"x": 2}]}]}}}`,
			`{"metrics": {"a": {"series": [{"stats": {"avg": 1}, "timeslices": 0}]}}}`},
		{"first member, several series", `{"metrics":{"a":{"series":[{"timeslices":[],"stats":{}},{"timeslices":{"k":"v"}}]},"b":null}}`,
			`{"metrics":{"a":{"series":[{"timeslices":0,"stats":{}},{"timeslices":0}]},"b":null}}`},
		{"elsewhere kept", `{"timeslices": [1], "metrics": {"a": {"timeslices": [2], "series": [{"stats": {"timeslices": [3]}, "timeslices": [4]}]}}}`,
			`{"timeslices": [1], "metrics": {"a": {"timeslices": [2], "series": [{"stats": {"timeslices": [3]}, "timeslices": 0}]}}}`},
		{"invalid inside", `{"metrics": {"a": {"series": [{"timeslices": [1,,2]}]}}}`, ""},
		{"invalid elsewhere", `{"metrics": {"a": {"series": [{"timeslices": []}], "type": tru}}}`, ""},
		{"escaped key left alone", `{"metrics": {"a": {"series": [{"time\u0073lices": [1], "timeslices": [2]}]}}}`,
			`{"metrics": {"a": {"series": [{"time\u0073lices": [1], "timeslices": 0}]}}}`},
		{"nothing to remove", `{"metrics": {"a": {"series": [{"stats": {}}]}}}`, ""},
		{"not an object", `[{"metrics": {}}]`, ""},
		{"trailing data", `{"metrics": {"a": {"series": [{"timeslices": []}]}}} {}`, ""},
	}
	for _, c := range cases {
		got, ok := withoutTimeslices([]byte(c.in))
		assert.Equal(t, c.want != "", ok, c.name)
		assert.Equal(t, c.want, string(got), c.name)
	}
}

// FuzzSkim holds the skimmer to encoding/json: a document it accepts is
// valid JSON, and an export reads the same with or without the skimmed
// pass.
func FuzzSkim(f *testing.F) {
	for _, s := range []string{
		`{"metrics": {"a": {"type": "gauge", "series": [{"stats": {"avg": 1}, "timeslices": [{"start_ns": 1, "value": 2.5}]}]}}}`,
		`{"metrics": {"a": {"series": [null, {"timeslices": [1e5, -0.5, "s\u00e9"]}]}}, "summary": {"endpoints_successful": ["u"]}}`,
		`{"metrics": {"a": {"series": [{"timeslices": [1,,2]}]}}}`,
		`[1, {"a": [true, false, null]}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if skimValid(b) && !json.Valid(b) {
			t.Fatalf("the skimmer accepts invalid JSON %q", b)
		}
		got, gotErr := serverMetrics(b, "f")
		want, ok := decodeServerMetrics(b, "f")
		var wantErr error
		if !ok {
			want, wantErr = readServerMetricsTolerant(b, "f")
		}
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("error %v, without the skimmer %v", gotErr, wantErr)
		}
		assert.Equal(t, want, got)
	})
}
