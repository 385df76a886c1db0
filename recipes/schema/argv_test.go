package schema

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestArgvFind(t *testing.T) {
	sglang := ArgvOptions{Schema: MustLoad("sglang", "v0.5.16")}
	vllm := ArgvOptions{Schema: MustLoad("vllm", "v0.27.1")}
	abbrev := func(o ArgvOptions) ArgvOptions { o.Abbrev = true; return o }
	tests := []struct {
		name   string
		opts   ArgvOptions
		argv   []string
		flag   string
		ok     bool
		values []string
		at     int // ValueAt
	}{
		{"attached value", ArgvOptions{}, []string{"--x=1"}, "--x", true, []string{"1"}, 0},
		{"attached empty value", ArgvOptions{}, []string{"--x=", "2"}, "--x", true, []string{""}, 0},
		{"separate value", ArgvOptions{}, []string{"--x", "1"}, "--x", true, []string{"1"}, 1},
		{"bare before a flag", ArgvOptions{}, []string{"--x", "--y", "2"}, "--x", true, nil, -1},
		{"bare at the end", ArgvOptions{}, []string{"--y", "2", "--x"}, "--x", true, nil, -1},
		{"negative number value", ArgvOptions{}, []string{"--x", "-1", "--y"}, "--x", true, []string{"-1"}, 1},
		{"negative float value", ArgvOptions{}, []string{"--x", "-1.5e3"}, "--x", true, []string{"-1.5e3"}, 1},
		{"dash alone is a value", ArgvOptions{}, []string{"--x", "-"}, "--x", true, []string{"-"}, 1},
		{"single-dash flag", ArgvOptions{}, []string{"python3", "-m", "sglang.launch_server"}, "-m", true, []string{"sglang.launch_server"}, 2},
		{"flag before a single-dash flag is bare", ArgvOptions{}, []string{"--x", "-m", "v"}, "--x", true, nil, -1},
		{"absent", ArgvOptions{}, []string{"--y", "1"}, "--x", false, nil, 0},
		{"a value is not a flag", ArgvOptions{}, []string{"--y", "--x=1"}, "--x", true, []string{"1"}, 1},
		{"last occurrence", ArgvOptions{}, []string{"--x", "1", "--x", "2"}, "--x", true, []string{"2"}, 3},
		{"double dash ends the flags", ArgvOptions{}, []string{"--x", "--", "--y", "1"}, "--y", false, nil, 0},
		{"abbreviation not asked for", ArgvOptions{}, []string{"--max-model", "5"}, "--max-model-len", false, nil, 0},
		{"abbreviation without a schema", ArgvOptions{Abbrev: true}, []string{"--max-model", "5"}, "--max-model-len", true, []string{"5"}, 1},
		{"bare two dashes abbreviate nothing", ArgvOptions{Abbrev: true}, []string{"--", "5"}, "--max-model-len", false, nil, 0},

		{"schema: bool flag is bare", sglang, []string{"--enable-dp-attention", "stray"}, "--enable-dp-attention", true, nil, -1},
		{"schema: value flag", sglang, []string{"--enable-dp-attention", "--tp-size", "8"}, "--tp-size", true, []string{"8"}, 2},
		{"schema: alias", sglang, []string{"--tensor-parallel-size", "8"}, "--tp-size", true, []string{"8"}, 1},
		{"schema: negative number value", sglang, []string{"--mem-fraction-static", "-1"}, "--mem-fraction-static", true, []string{"-1"}, 1},
		{"schema: program is positional", sglang, []string{"python3", "-m", "sglang.launch_server", "--port", "1"}, "-m", false, nil, 0},
		{"schema: unknown flag reads as without one", sglang, []string{"--new-flag", "v"}, "--new-flag", true, []string{"v"}, 1},
		{"schema: abbreviation not asked for", sglang, []string{"--mem-fraction", "0.8"}, "--mem-fraction-static", false, nil, 0},
		{"schema: abbreviation", abbrev(sglang), []string{"--mem-fraction", "0.8"}, "--mem-fraction-static", true, []string{"0.8"}, 1},
		{"schema: abbreviation the tool refuses", abbrev(vllm), []string{"vllm", "serve", "m", "--max-model", "5"}, "--max-model-len", false, nil, 0},
		{"schema: ambiguous abbreviation", abbrev(sglang), []string{"--enable-dp", "--port", "1"}, "--enable-dp-attention", false, nil, 0},
		{"schema: underscores", vllm, []string{"vllm", "serve", "m", "--max_num_seqs", "4"}, "--max-num-seqs", true, []string{"4"}, 4},
		{"schema: multi flag", vllm, []string{"vllm", "serve", "m", "--served-model-name", "a", "b", "--port", "1"}, "--served-model-name", true, []string{"a", "b"}, 4},
		{"schema: negative form", vllm, []string{"--no-enable-prefix-caching", "m"}, "--enable-prefix-caching", true, nil, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := ReadArgv(tc.argv, tc.opts).Find(tc.flag)
			assert.Equal(t, tc.ok, ok, "found %s in %q", tc.flag, tc.argv)
			if !ok {
				return
			}
			assert.Equal(t, tc.values, f.Values, "values of %s in %q", tc.flag, tc.argv)
			assert.Equal(t, tc.at, f.ValueAt(), "index of %s's value in %q", tc.flag, tc.argv)
		})
	}
}

func TestArgvPositionals(t *testing.T) {
	tests := []struct {
		name string
		opts ArgvOptions
		argv []string
		want []int
	}{
		{"program without a schema", ArgvOptions{}, []string{"python3", "-m", "sglang.launch_server", "--port", "1"}, []int{0}},
		{"program with a schema", ArgvOptions{Schema: MustLoad("sglang", "")}, []string{"python3", "-m", "sglang.launch_server", "--port", "1"}, []int{0, 1, 2}},
		{"subcommand and model tag", ArgvOptions{Schema: MustLoad("vllm", "")}, []string{"vllm", "serve", "m", "--port", "1"}, []int{0, 1, 2}},
		{"after a bare flag", ArgvOptions{Schema: MustLoad("sglang", "")}, []string{"--enable-dp-attention", "x"}, []int{1}},
		{"after double dash", ArgvOptions{}, []string{"--x", "--", "--y", "1"}, []int{2, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ReadArgv(tc.argv, tc.opts).Positionals, "positionals of %q", tc.argv)
		})
	}
}

func TestArgvEdits(t *testing.T) {
	argv := []string{"python3", "-m", "sglang.launch_server", "--port", "1", "--tool-call-parser=qwen", "--enable-dp-attention", "--tool-call-parser", "x", "--host", "h"}
	s := ArgvOptions{Schema: MustLoad("sglang", "")}
	assert.Equal(t, []string{"python3", "-m", "sglang.launch_server", "--port", "1", "--enable-dp-attention", "--host", "h"},
		ReadArgv(argv, s).Without("--tool-call-parser"))
	assert.Equal(t, []string{"python3", "-m", "sglang.launch_server", "--port", "1", "--tool-call-parser=qwen", "--tool-call-parser", "x", "--host", "h"},
		ReadArgv(argv, s).Without("--enable-dp-attention"))
	assert.Equal(t, argv, ReadArgv(argv, s).Without("--absent"))

	got, ok := ReadArgv(argv, s).WithValue("--port", "2")
	assert.True(t, ok)
	assert.Equal(t, "2", got[4], "separate value replaced")
	assert.Equal(t, "1", argv[4], "the argv read is left as it is")
	got, ok = ReadArgv([]string{"--port=1"}, ArgvOptions{}).WithValue("--port", "2")
	assert.True(t, ok)
	assert.Equal(t, []string{"--port=2"}, got, "attached value replaced in its form")
	_, ok = ReadArgv(argv, s).WithValue("--enable-dp-attention", "2")
	assert.False(t, ok, "a bare flag has no value to replace")
	_, ok = ReadArgv([]string{"--port"}, ArgvOptions{}).WithValue("--port", "2")
	assert.False(t, ok, "a flag at the end without a value")

	assert.Equal(t, map[string]string{"-m": "sglang.launch_server", "--port": "1", "--tool-call-parser": "x", "--enable-dp-attention": "", "--host": "h"},
		ReadArgv(argv, ArgvOptions{}).Values())
	assert.Equal(t, map[string]string{"--x": "-1", "--y": ""}, ReadArgv([]string{"--x", "-1", "--y"}, ArgvOptions{}).Values())
}

// TestValuesByName: with the tool's schema, Values keys a flag by the
// name the tool reads it as, so that spellings the tool reads alike
// (an abbreviation where it allows them, an alias, '_' for '-') are one
// flag; a negative form stays its own, and a flag the schema does not
// know, or an argv read without one, keys as spelt. Before, every flag
// keyed as spelt, and "--max-running-req 8" differed from
// "--max-running-requests=8".
func TestValuesByName(t *testing.T) {
	sglang := ArgvOptions{Schema: MustLoad("sglang", ""), Abbrev: true}
	vllm := ArgvOptions{Schema: MustLoad("vllm", ""), Abbrev: true}
	tests := []struct {
		name string
		argv []string
		o    ArgvOptions
		want map[string]string
	}{
		{"SGLang abbreviation", []string{"python3", "-m", "sglang.launch_server", "--max-running-req", "8"}, sglang,
			map[string]string{"--max-running-requests": "8"}},
		{"SGLang attached full spelling", []string{"python3", "-m", "sglang.launch_server", "--max-running-requests=8"}, sglang,
			map[string]string{"--max-running-requests": "8"}},
		{"SGLang alias and abbreviation, the last one kept", []string{"python3", "-m", "sglang.launch_server", "--tp", "4", "--tp-si=8"}, sglang,
			map[string]string{"--tp-size": "8"}},
		{"an abbreviation without Abbrev keys as spelt", []string{"python3", "-m", "sglang.launch_server", "--max-running-req", "8"}, ArgvOptions{Schema: sglang.Schema},
			map[string]string{"--max-running-req": "8"}},
		{"a flag the schema does not know keys as spelt", []string{"python3", "-m", "sglang.launch_server", "--frobnicate", "1"}, sglang,
			map[string]string{"--frobnicate": "1"}},
		{"vLLM underscores and alias", []string{"vllm", "serve", "m", "--max_num_seqs", "8", "-tp", "2"}, vllm,
			map[string]string{"--max-num-seqs": "8", "--tensor-parallel-size": "2"}},
		{"vLLM negative form stays its own", []string{"vllm", "serve", "m", "--no_enable_prefix_caching"}, vllm,
			map[string]string{"--no-enable-prefix-caching": ""}},
		{"vLLM takes no abbreviation", []string{"vllm", "serve", "m", "--max-num-se", "8"}, vllm,
			map[string]string{"--max-num-se": "8"}},
		{"no schema: as spelt", []string{"--max-running-req", "8", "--tp", "2"}, ArgvOptions{Abbrev: true},
			map[string]string{"--max-running-req": "8", "--tp": "2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ReadArgv(tc.argv, tc.o).Values())
		})
	}
}

// TestTokenAt: the token a problem stands at is the one that gives the
// flag the value it names (attached or separate, in whichever occurrence
// has it), else the flag's; a stray token (a problem with no flag, its
// tokens as Value) is found among the positionals after the program.
// Before, a stray token had no position, so a bool flag given a value
// ("--enable-metrics true") was refused at the whole argv.
func TestTokenAt(t *testing.T) {
	sglang := ArgvOptions{Schema: MustLoad("sglang", ""), Abbrev: true}
	argv := []string{"python3", "-m", "sglang.launch_server", "--tp", "8", "--enable-metrics", "true", "--tool-call-parser=x", "--tool-call-parser", "y", "--max-running-req", "8", "extra"}
	tests := []struct {
		name, flag, value string
		want              int
	}{
		{"the flag", "--enable-metrics", "", 5},
		{"a separate value", "--tp-size", "8", 4},
		{"the occurrence with the value, attached", "--tool-call-parser", "x", 7},
		{"the occurrence with the value, separate", "--tool-call-parser", "y", 9},
		{"another value: the first occurrence's flag", "--tool-call-parser", "z", 7},
		{"an abbreviation", "--max-running-requests", "8", 11},
		{"a stray token", "", "true", 6},
		{"stray tokens, the first", "", "true extra", 6},
		{"a stray token after the others", "", "extra", 12},
		{"not a program token", "", "python3", -1},
		{"an absent flag", "--port", "", -1},
		{"nothing", "", "", -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ReadArgv(argv, sglang).TokenAt(tc.flag, tc.value))
		})
	}
}

func TestOfProgram(t *testing.T) {
	tests := []struct {
		argv []string
		want string // schema ID, "" for none
	}{
		{[]string{"python3", "-m", "sglang.launch_server", "--port", "1"}, MustLoad("sglang", "").ID()},
		{[]string{"/venv/bin/python", "-m", "sglang.launch_server"}, MustLoad("sglang", "").ID()},
		{[]string{"sglang", "serve", "--port", "1"}, MustLoad("sglang", "").ID()},
		{[]string{"vllm", "serve", "m"}, MustLoad("vllm", "").ID()},
		{[]string{"/usr/bin/aiperf", "profile"}, MustLoad("aiperf", "").ID()},
		{[]string{"python3", "-m", "smg.launch_router", "--port", "1"}, MustLoad("smg", "").ID()},
		{[]string{"./launch.sh", "--port", "1"}, ""},
		{[]string{"--port", "1"}, ""},
		{nil, ""},
	}
	for _, tc := range tests {
		got := ""
		if s := OfProgram(tc.argv); s != nil {
			got = s.ID()
		}
		assert.Equal(t, tc.want, got, "schema of %q", tc.argv)
	}
}
