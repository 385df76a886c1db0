package loadgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
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

// TestWriteIndent: the streaming encoder writes the bytes of the old
// two-pass one (appendJSON, then indentJSON) for the artifact trees'
// value kinds, hands a large document to its writer in several chunks,
// and returns the writer's error.
func TestWriteIndent(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var gen func(depth int) any
	gen = func(depth int) any {
		switch k := rng.IntN(12); {
		case depth > 4 || k == 0:
			return rawFloat(rng.Float64() * 1e6)
		case k == 1:
			return num(float64(rng.IntN(1000)))
		case k == 2:
			return int64(rng.IntN(1 << 40))
		case k == 3:
			return []string{"a", `b"<c>`}[rng.IntN(2)] // a plain and an escaped string
		case k == 4:
			return map[string]string{"model": "m", "le": "+Inf"}
		case k == 5:
			return rng.IntN(2) == 0 // a bool goes through encoding/json
		case k == 6:
			return []object(nil)
		case k == 7:
			return []any{}
		case k <= 9:
			o := object{}
			for i := range rng.IntN(4) {
				o = append(o, field{"k" + strconv.Itoa(i), gen(depth + 1)})
			}
			return o
		default:
			var l []object
			for range rng.IntN(4) {
				l = append(l, object{{"x", gen(depth + 1)}})
			}
			return l
		}
	}
	for range 300 {
		v := object{{"root", gen(0)}, {"nan", rawFloat(math.NaN())}}
		raw, err := appendJSON(nil, v)
		require.NoError(t, err)
		want := append(indentJSON(nil, raw), '\n')
		var got bytes.Buffer
		require.NoError(t, writeIndent(&got, v))
		require.Equal(t, string(want), got.String())
	}

	big := object{}
	for i := range 20000 {
		big = append(big, field{"series" + strconv.Itoa(i), []object{{{"start_ns", int64(i)}, {"value", rawFloat(0.5)}}}})
	}
	w := &countingWriter{}
	require.NoError(t, writeIndent(w, big))
	raw, err := appendJSON(nil, big)
	require.NoError(t, err)
	assert.Equal(t, string(indentJSON(nil, raw))+"\n", w.String(), "the two-pass encoding's bytes")
	assert.Greater(t, w.writes, 2, "a large document is written in chunks")

	fail := errors.New("disk full")
	assert.ErrorIs(t, writeIndent(failingWriter{fail}, big), fail)
}

type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// TestSimContent: the fast path takes the simulated engine's content
// events and nothing else, whichever head it accepted before.
func TestSimContent(t *testing.T) {
	const tail = `,"choices":[{"index":0,"delta":{"content":"%s"},"logprobs":null,"finish_reason":null}]}` + "\n"
	ev := func(head, text string) []byte {
		return []byte(`data: {"id":"` + head + strings.ReplaceAll(tail, "%s", text))
	}
	good := `c1","object":"chat.completion.chunk","created":1,"model":"m"`
	cases := []struct {
		name string
		line []byte
		want string // "" for refused
	}{
		{"content", ev(good, "two words"), "two words"},
		{"same head again", ev(good, "more"), "more"},
		{"usage in the head", ev(`c1","usage":{"x":1},"model":"m"`, "w"), ""},
		{"error in the head", ev(`c1","error":"x","model":"m"`, "w"), ""},
		{"escaped text", ev(good, `a\"b`), ""},
		{"empty text", ev(good, ""), ""},
		{"non-ASCII text", ev(good, "caf\u00e9"), ""},
		{"another head", ev(`c2","object":"chat.completion.chunk","created":2,"model":"m"`, "w"), "w"},
		{"not data", []byte(": keep-alive\n"), ""},
	}
	var accepted []byte
	for _, c := range cases {
		text, ok := simContent(c.line, &accepted)
		assert.Equal(t, c.want != "", ok, c.name)
		assert.Equal(t, c.want, string(text), c.name)
	}
}

// TestAppendKey: a key is written as strconv.Quote writes it, plain or not.
func TestAppendKey(t *testing.T) {
	for _, k := range []string{"", "request_latency", "p99", `a"b`, `back\slash`, "tab\t", "caf\u00e9", "<x>&", "ctl\x01", "bad\xff", "sp ace"} {
		assert.Equal(t, strconv.Quote(k), string(appendKey([]byte{}, k)), "%q", k)
	}
}
