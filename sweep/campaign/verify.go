package campaign

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"

	"sweep/internal/inputfile"
	"sweep/metrics/result"
)

// pointKeys are the result fields that say which point a result measured,
// besides result.IdentityKeys (the arm).
var pointKeys = []string{"conc", "recipe_fingerprint", "model"}

// resultOf returns nil when the result file at path is p's: the fields
// that name its point (pointKeys, result.IdentityKeys) are those the
// aggregator writes for p's facts. A file copied from another point, or
// edited, is not trusted.
func resultOf(path string, p *Point) error {
	data, err := inputfile.Read(path, inputfile.Result)
	if err != nil {
		return fmt.Errorf("result %s: %w", filepath.Base(path), err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		return fmt.Errorf("result %s is corrupt or not an aggregate result", filepath.Base(path))
	}
	want, err := pointFields(p)
	if err != nil {
		return err
	}
	for _, k := range append(append([]string(nil), pointKeys...), result.IdentityKeys[:]...) {
		if !reflect.DeepEqual(got[k], want[k]) {
			return fmt.Errorf("result %s holds another point's result: %s is %s, the point's is %s", filepath.Base(path), k, jsonText(got[k]), jsonText(want[k]))
		}
	}
	return nil
}

// pointFields are the fields of p's result that its facts decide, as
// JSON values.
func pointFields(p *Point) (map[string]any, error) {
	data, err := json.Marshal(result.Identify(result.FactsFromRow(&p.Plan.Row, p.Plan.ResultFilename, nil, 0)))
	if err != nil {
		return nil, err
	}
	var m map[string]any
	err = json.Unmarshal(data, &m)
	return m, err
}

// jsonText is v as JSON ("null" when absent).
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
