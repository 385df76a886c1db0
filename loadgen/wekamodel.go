package loadgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sweep/configs"
)

// The WEKA trace model of aiperf 0.12.0 (aiperf.dataset.loader
// weka_trace_models: WekaTrace, WekaNormalRequest, WekaStreamingRequest,
// WekaSubagentEntry). Every model forbids extra fields, and aiperf refuses
// a trace set with one bad trace, so a set sweep ships or writes must pass
// CheckAiperfWeka to be replayable by a real aiperf.
type wekaModel struct {
	required, optional []string
}

var (
	wekaTraceModel = wekaModel{
		required: []string{"id", "models", "block_size", "hash_id_scope", "requests"},
		optional: []string{"tool_tokens", "system_tokens", "totals"},
	}
	// "in" and "out" are aliases of input_length and output_length
	// (populate_by_name: either spelling is accepted).
	wekaRequestModel = wekaModel{
		required: []string{"t", "type", "model", "in", "out"},
		optional: []string{"hash_ids", "input_types", "output_types", "stop", "api_time", "think_time"},
	}
	wekaSubagentModel = wekaModel{
		required: []string{"t", "type", "agent_id", "subagent_type", "status", "requests", "models"},
		optional: []string{"duration_ms", "total_tokens", "tool_use_count", "tool_tokens", "system_tokens"},
	}
)

// AiperfWekaVersion is the aiperf version whose trace model
// CheckAiperfWeka applies.
const AiperfWekaVersion = "0.12.0"

// CheckAiperfWeka checks JSONL traces (one trace object per line) against
// aiperf 0.12.0's WekaTrace model and returns every violation, each a
// *configs.Error naming the line and the field path.
func CheckAiperfWeka(name string, r io.Reader) error {
	var errs []error
	err := eachJSONLine(r, func(line int, b []byte) error {
		for _, msg := range checkWekaTrace(b) {
			errs = append(errs, &configs.Error{File: name, Line: line, Msg: msg + " (aiperf " + AiperfWekaVersion + " WekaTrace)"})
		}
		return nil
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", name, err))
	}
	return errors.Join(errs...)
}

// checkWekaTrace lists what in one trace object aiperf's model rejects.
func checkWekaTrace(b []byte) []string {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return []string{"not a JSON object: " + err.Error()}
	}
	out := wekaTraceModel.check("", obj)
	var scope string
	if raw, ok := obj["hash_id_scope"]; ok && (json.Unmarshal(raw, &scope) != nil || scope != "local") {
		out = append(out, fmt.Sprintf("hash_id_scope %s: want \"local\"", raw))
	}
	var bs float64
	if raw, ok := obj["block_size"]; ok && (json.Unmarshal(raw, &bs) != nil || bs <= 0 || bs != float64(int64(bs))) {
		out = append(out, fmt.Sprintf("block_size %s: want a positive integer", raw))
	}
	out = append(out, checkStrings("models", obj["models"])...)
	return append(out, checkWekaRequests("requests", obj["requests"], true)...)
}

// checkWekaRequests checks a request list; subagents may appear at the top
// level only (a subagent's requests are normal or streaming calls).
func checkWekaRequests(path string, raw json.RawMessage, top bool) []string {
	if raw == nil {
		return nil
	}
	var list []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return []string{path + ": want a list of request objects"}
	}
	var out []string
	for i, r := range list {
		p := fmt.Sprintf("%s[%d]", path, i)
		var typ string
		_ = json.Unmarshal(r["type"], &typ)
		switch {
		case typ == "n" || typ == "s":
			m := wekaRequestModel
			if typ == "s" {
				m.optional = append(slices.Clip(m.optional), "ttft")
			}
			out = append(out, m.check(p+".", aliased(r))...)
		case typ == "subagent" && top:
			out = append(out, wekaSubagentModel.check(p+".", r)...)
			out = append(out, checkStrings(p+".models", r["models"])...)
			out = append(out, checkWekaRequests(p+".requests", r["requests"], false)...)
		default:
			want := `"n", "s" or "subagent"`
			if !top {
				want = `"n" or "s" (inside a subagent)`
			}
			out = append(out, fmt.Sprintf("%s.type %s: want %s", p, r["type"], want))
		}
	}
	return out
}

// aliased maps aiperf's field names to the trace format's aliases.
func aliased(r map[string]json.RawMessage) map[string]json.RawMessage {
	_, a := r["input_length"]
	_, b := r["output_length"]
	if !a && !b {
		return r
	}
	c := make(map[string]json.RawMessage, len(r))
	for k, v := range r {
		switch k {
		case "input_length":
			k = "in"
		case "output_length":
			k = "out"
		}
		c[k] = v
	}
	return c
}

func checkStrings(path string, raw json.RawMessage) []string {
	if raw == nil {
		return nil
	}
	var ss []string
	if json.Unmarshal(raw, &ss) != nil {
		return []string{path + ": want a list of strings"}
	}
	return nil
}

// check lists the missing required and the forbidden extra fields of obj.
func (m wekaModel) check(path string, obj map[string]json.RawMessage) []string {
	var out []string
	for _, k := range m.required {
		if v, ok := obj[k]; !ok || string(v) == "null" {
			out = append(out, fmt.Sprintf("%s%s: required field missing", path, k))
		}
	}
	var extra []string
	for k := range obj {
		if !slices.Contains(m.required, k) && !slices.Contains(m.optional, k) {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	if len(extra) > 0 {
		out = append(out, fmt.Sprintf("%s{%s}: extra fields not permitted", path, strings.Join(extra, ", ")))
	}
	return out
}
