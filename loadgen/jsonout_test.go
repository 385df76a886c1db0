package loadgen

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIndentJSON: indentJSON writes what json.Indent writes, for tricky
// values and for random nested documents.
func TestIndentJSON(t *testing.T) {
	cases := []string{
		`{}`, `[]`, `{"a":{}}`, `{"a":[]}`, `[[],{},[{}]]`, `1`, `"x"`, `null`,
		`{"a":1,"b":[1,2,{"c":"d"}],"e":{"f":null,"g":true}}`,
		`{"s":"brace { and ] and , and : inside","q":"a \"quoted\" \\ back\\\\slash","u":"\u00e9\n"}`,
		` { "spaced" : [ 1 , 2 ] }`, // (json.Indent keeps trailing space; appendJSON writes none)
		`{"k":"ends with backslash \\\\"}`,
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var gen func(depth int) any
	gen = func(depth int) any {
		switch k := rng.IntN(7); {
		case depth > 4 || k == 0:
			return rng.Float64() * 1e6
		case k == 1:
			return "s" + strconv.Itoa(rng.IntN(100)) + `"{[,:]}\`
		case k == 2:
			return nil
		case k <= 4:
			m := map[string]any{}
			for i := range rng.IntN(4) {
				m["k"+strconv.Itoa(i)] = gen(depth + 1)
			}
			return m
		default:
			a := []any{}
			for range rng.IntN(4) {
				a = append(a, gen(depth+1))
			}
			return a
		}
	}
	for range 200 {
		b, err := json.Marshal(gen(0))
		require.NoError(t, err)
		cases = append(cases, string(b))
	}
	for _, c := range cases {
		var want bytes.Buffer
		require.NoError(t, json.Indent(&want, []byte(c), "", "  "), c)
		assert.Equal(t, want.String(), string(indentJSON(nil, []byte(c))), c)
	}
}
