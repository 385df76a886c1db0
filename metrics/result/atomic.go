package result

import (
	"encoding/json"

	"sweep/internal/atomicfile"
)

// MarshalResult encodes a result as InferenceX writes it (two-space
// indent) with a trailing newline.
func MarshalResult(r *Result) ([]byte, error) {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// WriteResult writes the result atomically to path.
func WriteResult(path string, r *Result) error {
	data, err := MarshalResult(r)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, data, 0o644)
}
