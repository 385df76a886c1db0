package configs

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"sweep/internal/inputfile"
)

// DecodeJSON decodes data, the contents of file, into v the way sweep
// reads back the JSON files it writes for users to hand to it again
// (calibrations, arm job files): one JSON value, no unknown keys. A
// problem is an *Error at its line and column, naming the key where one
// is known; want says what the file should be ("the JSON sweep sim
// calibrate writes") and ends every message.
func DecodeJSON(file string, data []byte, v any, want string) error {
	return decodeJSON(file, data, v, want, true)
}

// DecodeRecordJSON decodes data, the contents of file, into v as
// DecodeJSON does, but passes over keys v does not have: it reads the
// records sweep writes for itself (a point's run.json), which a newer
// sweep may have written with keys of its own. A problem is an *Error at
// its line and column, want ending its message.
func DecodeRecordJSON(file string, data []byte, v any, want string) error {
	return decodeJSON(file, data, v, want, false)
}

// ReadJSON reads file (a small regular file: inputfile.SmallJSON) and
// decodes it into v as DecodeJSON does, returning its contents for
// positioned errors of the caller's own checks. An error reading it is
// inputfile's (errors.Is fs.ErrNotExist for a missing file).
func ReadJSON(file string, v any, want string) ([]byte, error) {
	return readJSON(file, v, want, true)
}

// ReadRecordJSON is ReadJSON for a record sweep writes for itself
// (DecodeRecordJSON: keys v does not have are passed over).
func ReadRecordJSON(file string, v any, want string) ([]byte, error) {
	return readJSON(file, v, want, false)
}

func readJSON(file string, v any, want string, strict bool) ([]byte, error) {
	data, err := inputfile.Read(file, inputfile.SmallJSON)
	if err != nil {
		return nil, err
	}
	return data, decodeJSON(file, data, v, want, strict)
}

// decodeJSON is DecodeJSON, refusing unknown keys when strict.
func decodeJSON(file string, data []byte, v any, want string, strict bool) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if strict {
		dec.DisallowUnknownFields()
	}
	err := dec.Decode(v)
	if err == nil {
		end := dec.InputOffset()
		var extra json.RawMessage
		if err := dec.Decode(&extra); err != io.EOF {
			line, col := offsetLineCol(data, nextNonSpace(data, end))
			return &Error{File: file, Line: line, Col: col, Msg: "more after the end of the JSON value: want " + want}
		}
		return nil
	}
	e := &Error{File: file, Msg: err.Error() + ": want " + want}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		e.Msg = "empty: want " + want
	case errors.Is(err, io.ErrUnexpectedEOF):
		e.Line, e.Col = offsetLineCol(data, int64(len(data)))
		e.Msg = "the JSON ends early: want " + want
	case errors.As(err, &se):
		e.Line, e.Col = offsetLineCol(data, se.Offset-1)
		e.Msg = se.Error() + ": want " + want
	case errors.As(err, &te):
		if error(te) == err {
			e.Line, e.Col = offsetLineCol(data, te.Offset-1)
			// encoding/json's Field leaves out map keys and list
			// indexes ("processes.argv" of processes.client.argv); a
			// value outside any field (an element of a top-level list)
			// is named by its position alone.
			if e.Key = te.Field; e.Key != "" {
				e.Key = cmp.Or(keyPathAt(data, te.Offset), te.Field)
			}
		} else {
			// From a type's own UnmarshalJSON: its offset is into the
			// value that type was given, not into data.
			e.Key, e.Line, e.Col = namedKeyAt(data, err)
		}
		e.Msg = fmt.Sprintf("a JSON %s where %s belongs: want %s", te.Value, jsonKind(te.Type), want)
		if kind := jsonKind(te.Type); kind == "a number" && strings.HasPrefix(te.Value, "number") {
			// A number where a number belongs: one a float64 cannot hold.
			e.Msg = fmt.Sprintf("a JSON %s, out of a number's range (at most about 1.8e308 either way): want %s", te.Value, want)
		}
	default:
		if m := unknownField.FindStringSubmatch(err.Error()); m != nil {
			name, _ := strconv.Unquote(m[1])
			e.Key = name
			e.Msg = "unknown key: want " + want
			if at := keyOffset(data, name); at >= 0 {
				e.Line, e.Col = offsetLineCol(data, at)
				// Its path (arms[1].stepscale), as a wrong type's.
				e.Key = cmp.Or(keyPathAt(data, at), name)
			}
		} else {
			e.Key, e.Line, e.Col = namedKeyAt(data, err)
		}
	}
	return e
}

// namedKeyAt is the key a type's own UnmarshalJSON (a matrix row's) names
// in err, and where that key first is in data (0, 0 when err names none,
// or data does not hold it).
func namedKeyAt(data []byte, err error) (key string, line, col int) {
	m := namedKey.FindStringSubmatch(err.Error())
	if m == nil {
		return "", 0, 0
	}
	key, _ = strconv.Unquote(m[1])
	if at := keyOffset(data, key); at >= 0 {
		line, col = offsetLineCol(data, at)
	}
	return key, line, col
}

// jsonKind names what JSON a Go type decodes from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "another value"
}

// unknownField matches encoding/json's error for a key
// DisallowUnknownFields refuses; it names the key but not where it is.
// A type's own UnmarshalJSON may put it behind its context ("planned
// point: json: unknown field ...").
var unknownField = regexp.MustCompile(`json: unknown field ("(?:[^"\\]|\\.)*")$`)

// namedKey matches the key a type's own UnmarshalJSON names in its error
// (`matrix row: key "conc": json: cannot unmarshal ...`).
var namedKey = regexp.MustCompile(`\bkey ("(?:[^"\\]|\\.)*"): `)

// keyOffset returns the offset of the first object key name in data
// (the quoted name followed by a colon), or -1.
func keyOffset(data []byte, name string) int64 {
	quoted, _ := json.Marshal(name)
	for from := 0; ; {
		i := bytes.Index(data[from:], quoted)
		if i < 0 {
			return -1
		}
		at := from + i
		if rest := bytes.TrimLeft(data[at+len(quoted):], " \t\r\n"); len(rest) > 0 && rest[0] == ':' {
			return int64(at)
		}
		from = at + 1
	}
}

// nextNonSpace returns the offset of the first byte at or after at that
// is not JSON white space (len(data) when there is none).
func nextNonSpace(data []byte, at int64) int64 {
	for at < int64(len(data)) && bytes.IndexByte([]byte(" \t\r\n"), data[at]) >= 0 {
		at++
	}
	return at
}

// offsetLineCol returns the 1-based line and column (in bytes) of the
// byte at offset in data (offsets past the end point just after it).
func offsetLineCol(data []byte, offset int64) (line, col int) {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line = bytes.Count(before, []byte{'\n'}) + 1
	return line, int(offset) - (bytes.LastIndexByte(before, '\n') + 1) + 1
}

// JSONElementErrorf returns an Error at the i-th element (0-based) of the
// list under the top-level object key list in data, for a value that
// decoded but is wrong: key names it ("arms[2].step_scale"). The line and
// column are left out when the element cannot be found.
func JSONElementErrorf(file string, data []byte, list string, i int, key, format string, args ...any) *Error {
	return JSONValueErrorf(file, data, []any{list, i}, key, format, args...)
}

// JSONValueErrorf returns an Error at the value path names in data, one
// step per level from the top: an object key (string) or a list index
// (int, 0-based), as {"engine": {"argv": [...]}}'s third argv token is
// []any{"engine", "argv", 2}; key names it in the message. The line and
// column are left out when the value cannot be found.
func JSONValueErrorf(file string, data []byte, path []any, key, format string, args ...any) *Error {
	e := &Error{File: file, Key: key, Msg: fmt.Sprintf(format, args...)}
	if at := valueOffset(data, path); at >= 0 {
		e.Line, e.Col = offsetLineCol(data, at)
	}
	return e
}

// valueOffset returns the offset of the value path names in data (see
// JSONValueErrorf), or -1.
func valueOffset(data []byte, path []any) int64 {
	dec := json.NewDecoder(bytes.NewReader(data))
	for _, step := range path {
		t, err := dec.Token()
		if err != nil {
			return -1
		}
		var found bool
		switch step := step.(type) {
		case string:
			found = t == json.Delim('{') && skipToKey(dec, step)
		case int:
			found = t == json.Delim('[') && skipElements(dec, step)
		}
		if !found {
			return -1
		}
	}
	// The value starts after the ':' of its key or the ',' after the
	// element before it.
	at := nextNonSpace(data, dec.InputOffset())
	if at < int64(len(data)) && (data[at] == ',' || data[at] == ':') {
		at = nextNonSpace(data, at+1)
	}
	if at >= int64(len(data)) {
		return -1
	}
	return at
}

// keyPathAt is the path of the innermost value in data that ends at or
// after offset ("processes.client.argv", "arms[2].step_scale"), "" when
// data does not read that far or offset is in no object or list.
func keyPathAt(data []byte, offset int64) string {
	type level struct {
		obj  bool
		key  string
		idx  int
		want bool // an object's next string is a key
	}
	var stack []level
	path := func() string {
		var b strings.Builder
		for _, l := range stack {
			switch {
			case l.obj && b.Len() > 0:
				b.WriteString("." + l.key)
			case l.obj:
				b.WriteString(l.key)
			default:
				fmt.Fprintf(&b, "[%d]", l.idx)
			}
		}
		return b.String()
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // a number no float64 holds (1e999) is a token too
	for {
		t, err := dec.Token()
		if err != nil {
			return ""
		}
		if d, ok := t.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				top := &stack[len(stack)-1]
				top.want, top.idx = top.obj, top.idx+1
			}
			continue
		}
		if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].want {
			stack[n-1].key, stack[n-1].want = t.(string), false
			continue
		}
		if dec.InputOffset() >= offset {
			return path()
		}
		if d, ok := t.(json.Delim); ok {
			stack = append(stack, level{obj: d == '{', want: d == '{'})
			continue
		}
		if n := len(stack); n > 0 {
			stack[n-1].want, stack[n-1].idx = stack[n-1].obj, stack[n-1].idx+1
		}
	}
}

// skipToKey reads an object's members up to the key name (dec just read
// the object's '{'), reporting whether it is there.
func skipToKey(dec *json.Decoder, name string) bool {
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return false
		}
		if k == name {
			return true
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

// skipElements reads the first n elements of a list (dec just read its
// '['), reporting whether an element n follows them.
func skipElements(dec *json.Decoder, n int) bool {
	for ; n > 0 && dec.More(); n-- {
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return n == 0 && dec.More()
}
