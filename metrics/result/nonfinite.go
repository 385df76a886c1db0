package result

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// NonFinite is a number JSON cannot hold that a result file holds anyway:
// Python's json.dump writes NaN, Infinity and -Infinity (allow_nan is its
// default), so InferenceX's own result files can carry them.
type NonFinite struct {
	Path  string // the key path, e.g. "request_metrics.qps.std" or "sources[0].id"
	Token string // NaN, Infinity or -Infinity
}

func (n NonFinite) String() string { return n.Path + "=" + n.Token }

// pythonTokens are the non-JSON number literals Python's json module
// writes and reads (json.loads accepts exactly these three spellings).
var pythonTokens = []string{"NaN", "Infinity", "-Infinity"}

// replaceNonFinite returns data with every NaN, Infinity and -Infinity
// outside a string replaced by null, so encoding/json can read it, and
// where they were. Python's json.loads reads these tokens as floats; a
// result reader here reads them as not measured (null) and says so. Data
// without them is returned as is. Malformed JSON is left for the decoder
// to reject.
func replaceNonFinite(data []byte) ([]byte, []NonFinite) {
	return rewriteNonFinite(data, func(string) string { return "null" })
}

// padNonFinite returns data with every NaN, Infinity and -Infinity
// outside a string replaced by a JSON number of the same length, so that
// a syntax error found in it is at the offset it has in data.
func padNonFinite(data []byte) []byte {
	out, _ := rewriteNonFinite(data, func(tok string) string {
		return map[string]string{"NaN": "0.0", "Infinity": "1.000000", "-Infinity": "-1.000000"}[tok]
	})
	return out
}

// rewriteNonFinite is replaceNonFinite with each token replaced by
// with(token).
func rewriteNonFinite(data []byte, with func(tok string) string) ([]byte, []NonFinite) {
	if !bytes.Contains(data, []byte("NaN")) && !bytes.Contains(data, []byte("Infinity")) {
		return data, nil
	}
	type frame struct {
		object bool
		key    string // the current key (object)
		index  int    // the current element (array)
		atKey  bool   // an object expects a key next
	}
	var (
		stack []frame
		found []NonFinite
		out   = make([]byte, 0, len(data))
	)
	path := func() string {
		var b strings.Builder
		for _, f := range stack {
			if f.object {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			} else {
				b.WriteString("[" + strconv.Itoa(f.index) + "]")
			}
		}
		return b.String()
	}
	for i := 0; i < len(data); {
		c := data[i]
		switch c {
		case '"':
			end := stringEnd(data, i)
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].atKey {
				var k string
				if json.Unmarshal(data[i:end], &k) != nil {
					k = string(data[i+1 : max(end-1, i+1)])
				}
				stack[n-1].key = k
			}
			out = append(out, data[i:end]...)
			i = end
			continue
		case '{', '[':
			stack = append(stack, frame{object: c == '{', atKey: c == '{'})
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ':':
			if n := len(stack); n > 0 {
				stack[n-1].atKey = false
			}
		case ',':
			if n := len(stack); n > 0 {
				if stack[n-1].object {
					stack[n-1].atKey = true
				} else {
					stack[n-1].index++
				}
			}
		case 'N', 'I', '-':
			if tok := tokenAt(data, i); tok != "" {
				found = append(found, NonFinite{Path: path(), Token: tok})
				out = append(out, with(tok)...)
				i += len(tok)
				continue
			}
		}
		out = append(out, c)
		i++
	}
	return out, found
}

// tokenAt returns the Python non-finite literal starting at data[i], or "".
func tokenAt(data []byte, i int) string {
	for _, t := range pythonTokens {
		if bytes.HasPrefix(data[i:], []byte(t)) {
			return t
		}
	}
	return ""
}

// stringEnd returns the index just past the JSON string starting at
// data[i] (a '"'), or len(data) when it is not closed.
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(data)
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
