package configs

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDecodeJSON: every way a hand-edited JSON file goes wrong is an
// *Error at the line and column of the problem, with the key when one is
// known and what the file should be.
func TestDecodeJSON(t *testing.T) {
	type arm struct {
		TP    int     `json:"tp"`
		Scale float64 `json:"step_scale"`
	}
	type file struct {
		Version int            `json:"version"`
		Source  string         `json:"source"`
		Arms    []arm          `json:"arms"`
		Procs   map[string]arm `json:"procs"`
	}
	const want = "the JSON sweep sim calibrate writes"
	tests := []struct {
		name, data string
		err        string // "" when it decodes
	}{
		{"good", "{\"version\": 1,\n \"arms\": [{\"tp\": 8}]}\n", ""},
		{"unknown key", "{\"version\": 1,\n \"arms\": [{\"tp\": 8,\n   \"tp_size\": 8}]}", "c.json:3:4: arms[0].tp_size: unknown key: want " + want},
		{"unknown key named in a value first", "{\"source\": \"pool\", \"arms\": [{\"tp\": 8}],\n \"pool\": 1}", "c.json:2:2: pool: unknown key: want " + want},
		{"wrong type", "{\"version\": 1,\n \"arms\": [{\"tp\": \"eight\"}]}", "c.json:2:24: arms[0].tp: a JSON string where an integer belongs: want " + want},
		// encoding/json's own path leaves out list indexes and map keys
		// (a run.json's "processes.argv" of processes.client.argv).
		{"wrong type in a later element", "{\"arms\": [{\"tp\": 8},\n {\"tp\": 8, \"step_scale\": [1]}]}", "c.json:2:26: arms[1].step_scale: a JSON array where a number belongs: want " + want},
		{"wrong type under a map key", "{\"version\": 1,\n \"procs\": {\"client\": {\"tp\": 1},\n  \"server\": {\"tp\": \"eight\"}}}", "c.json:3:26: procs.server.tp: a JSON string where an integer belongs: want " + want},
		{"wrong type of a whole value", "{\"version\": 1,\n \"procs\": {\"client\": [8]}}", "c.json:2:22: procs.client: a JSON array where an object belongs: want " + want},
		// The path of a number no float64 holds, and of an unknown key in a
		// later element: they were named "arms.step_scale" and
		// "stepscale", where a wrong type is "arms[1].step_scale".
		{"number out of range", "{\"arms\": [{\"tp\": 8},\n {\"tp\": 8, \"step_scale\": 1e999}]}", "c.json:2:30: arms[1].step_scale: a JSON number 1e999, out of a number's range (at most about 1.8e308 either way): want " + want},
		{"unknown key in a later element", "{\"arms\": [{\"tp\": 8},\n {\"tp\": 8, \"stepscale\": 1}]}", "c.json:2:12: arms[1].stepscale: unknown key: want " + want},
		{"syntax", "{\"version\": 1,\n \"arms\": [{\"tp\": 8,}]}", "c.json:2:20: invalid character '}' looking for beginning of object key string: want " + want},
		{"ends early", "{\"version\": 1,\n \"arms\": [", "c.json:2:11: the JSON ends early: want " + want},
		{"empty", "  \n", "c.json: empty: want " + want},
		{"trailing", "{\"version\": 1}\n{\"version\": 2}\n", "c.json:2:1: more after the end of the JSON value: want " + want},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f file
			err := DecodeJSON("c.json", []byte(tt.data), &f, want)
			if tt.err == "" {
				require.NoError(t, err)
				assert.Equal(t, file{Version: 1, Arms: []arm{{TP: 8}}}, f)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tt.err, err.Error())
			assert.Len(t, Errors(err), 1, "an *Error")
		})
	}
}

// TestDecodeRecordJSON: a record sweep writes for itself passes over a
// key it does not know (a newer sweep's), and a broken one is an *Error
// at its position as DecodeJSON's are.
func TestDecodeRecordJSON(t *testing.T) {
	type rec struct {
		Name string `json:"name"`
	}
	const want = "the run.json sweep run writes"
	tests := []struct {
		name, data string
		err        string // "" when it decodes
	}{
		{"unknown key", "{\"name\": \"p\",\n \"newer\": 1}", ""},
		{"truncated", "{\"name\": \"p\",\n \"ok\": tr", "run.json:2:10: the JSON ends early: want " + want},
		{"ends early", "{\"name\": \"p\",\n", "run.json:2:1: the JSON ends early: want " + want},
		{"garbage", "\x00\x00", "run.json:1:1: invalid character '\\x00' looking for beginning of value: want " + want},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r rec
			err := DecodeRecordJSON("run.json", []byte(tt.data), &r, want)
			if tt.err == "" {
				require.NoError(t, err)
				assert.Equal(t, rec{Name: "p"}, r)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tt.err, err.Error())
			assert.Len(t, Errors(err), 1, "an *Error")
		})
	}
}

// ownDecoder decodes as a type with its own UnmarshalJSON does: it
// names the key it refused, and the type error it wraps has an offset
// into the value it was given, not into the file.
type ownDecoder struct{ Conc int }

func (o *ownDecoder) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	if err := json.Unmarshal(m["conc"], &o.Conc); err != nil {
		return fmt.Errorf("matrix row: key %q: %w", "conc", err)
	}
	return nil
}

// TestDecodeJSONOwnUnmarshaler: a type error from a type's own
// UnmarshalJSON is placed at the key it names (it was placed by its
// offset into the value, line 1), and an unknown key it reports behind
// its context is placed too.
func TestDecodeJSONOwnUnmarshaler(t *testing.T) {
	var v struct{ Row ownDecoder }
	err := DecodeJSON("p.json", []byte("{\n  \"Row\": {\n    \"conc\": \"32\"\n  }\n}\n"), &v, "a plan")
	require.Error(t, err)
	assert.Equal(t, "p.json:3:5: conc: a JSON string where an integer belongs: want a plan", err.Error())

	err = DecodeJSON("p.json", []byte("{\n  \"Row\": {\"conc\": 1},\n  \"x\": 1}"), &v, "a plan")
	require.Error(t, err)
	assert.Equal(t, "p.json:3:3: x: unknown key: want a plan", err.Error())
}

// TestJSONValueErrorf: an error about a value that decoded but is wrong
// points at that value, however deep (keys and list indexes, a plan file
// printed as an array of one), and leaves the position out when the path
// names no value.
func TestJSONValueErrorf(t *testing.T) {
	const plan = "[\n  {\n    \"recipe\": \"r\",\n    \"engine\": {\n      \"argv\": [\"python3\", \"-m\",\n        \"sglang.launch_server\", \"--crash-dump-folder\", \"/elsewhere\"]\n    }\n  }\n]\n"
	tests := []struct {
		name string
		data string
		path []any
		want string
	}{
		{"argv token of a plan array", plan, []any{0, "engine", "argv", 4}, "p.json:6:56: k: m"},
		{"first argv token", plan, []any{0, "engine", "argv", 0}, "p.json:5:16: k: m"},
		{"object value", plan, []any{0, "recipe"}, "p.json:3:15: k: m"},
		{"top-level list element", "{\"arms\": [{\"tp\": 8},\n  {\"tp\": 4}]}", []any{"arms", 1}, "p.json:2:3: k: m"},
		{"index past the end", plan, []any{0, "engine", "argv", 5}, "p.json: k: m"},
		{"missing key", plan, []any{0, "client"}, "p.json: k: m"},
		{"key of a list", plan, []any{"engine"}, "p.json: k: m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, JSONValueErrorf("p.json", []byte(tt.data), tt.path, "k", "m").Error())
		})
	}
}

// TestReadJSON: ReadJSON refuses a key its value lacks at its line and
// column, ReadRecordJSON passes over it (a newer sweep's record), both
// return the file's bytes, and a missing file is fs.ErrNotExist.
func TestReadJSON(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "r.json")
	require.NoError(t, os.WriteFile(file, []byte("{\"a\": 1,\n \"newer\": true}\n"), 0o644))
	var v struct {
		A int `json:"a"`
	}
	_, err := ReadJSON(file, &v, "a test file")
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, [2]int{2, 2}, [2]int{e.Line, e.Col}, "%v", err)
	data, err := ReadRecordJSON(file, &v, "a test record")
	require.NoError(t, err)
	assert.Equal(t, 1, v.A)
	assert.Contains(t, string(data), `"newer"`)
	_, err = ReadRecordJSON(filepath.Join(dir, "none.json"), &v, "a test record")
	assert.ErrorIs(t, err, fs.ErrNotExist)
}
