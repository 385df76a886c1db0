package matrix

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"sweep/internal/pyjson"
)

// Fingerprint returns the row's recipe fingerprint as process_changelog.py
// computes it: the sha256 (lower-case hex) of the row without conc,
// exp-name and recipe-fingerprint, written as
// json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=True).
// Rows that differ only in concurrency share a fingerprint.
func Fingerprint(r *Row) string {
	var buf [1024]byte
	sum := sha256.Sum256(appendRowJSON(buf[:0], r, styleCanonical, fingerprintSkip))
	return hex.EncodeToString(sum[:])
}

// CanonicalJSON encodes v exactly as Python's
// json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
// encodes the equivalent Python value: keys sorted by code point, no
// spaces, non-ASCII as \uXXXX (surrogate pairs above U+FFFF), floats as
// repr() writes them (1.0, 0.8, 1e-05, 1e+16, NaN, Infinity). v may hold
// nil, bool, string, any integer or float type, *Row, Matrix, and maps with
// string keys, slices and arrays of those.
func CanonicalJSON(v any) ([]byte, error) {
	return appendCanonical(nil, reflect.ValueOf(v))
}

func appendCanonical(b []byte, v reflect.Value) ([]byte, error) {
	if !v.IsValid() {
		return append(b, "null"...), nil
	}
	switch x := v.Interface().(type) {
	case *Row:
		if x == nil {
			return append(b, "null"...), nil
		}
		return appendRowJSON(b, x, styleCanonical, 0), nil
	case Matrix:
		b = append(b, '[')
		for i, r := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendRowJSON(b, r, styleCanonical, 0)
		}
		return append(b, ']'), nil
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		return appendCanonical(b, v.Elem())
	case reflect.Bool:
		if v.Bool() {
			return append(b, "true"...), nil
		}
		return append(b, "false"...), nil
	case reflect.String:
		return pyjson.AppendString(b, v.String(), true), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(b, v.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.AppendUint(b, v.Uint(), 10), nil
	case reflect.Float32:
		// Python floats are doubles; a float32 is widened by its shortest
		// decimal form, as Python would read it.
		f, _ := strconv.ParseFloat(strconv.FormatFloat(v.Float(), 'g', -1, 32), 64)
		return pyjson.AppendFloat(b, f), nil
	case reflect.Float64:
		return pyjson.AppendFloat(b, v.Float()), nil
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i := range v.Len() {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendCanonical(b, v.Index(i)); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return nil, fmt.Errorf("canonical json: map key type %s is not a string", v.Type().Key())
		}
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		keys := make([]string, 0, v.Len())
		for _, k := range v.MapKeys() {
			keys = append(keys, k.String())
		}
		// Go compares strings by UTF-8 bytes, which orders them by code
		// point as Python does.
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = pyjson.AppendString(b, k, true)
			b = append(b, ':')
			var err error
			if b, err = appendCanonical(b, v.MapIndex(reflect.ValueOf(k).Convert(v.Type().Key()))); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	return nil, fmt.Errorf("canonical json: unsupported type %s", v.Type())
}

// StampedFingerprint is the row's recipe fingerprint: the one stamped on
// it (RecipeFingerprint, as a changelog row carries it), else Fingerprint.
func (r *Row) StampedFingerprint() string {
	if r.RecipeFingerprint != "" {
		return r.RecipeFingerprint
	}
	return Fingerprint(r)
}

// StampFingerprint stamps the row with its recipe fingerprint as
// InferenceX's changelog processing does (a row already stamped keeps
// its stamp), so its result file name and recipe_fingerprint match its
// CI's. Every stamp sweep applies goes through here.
func (r *Row) StampFingerprint() { r.RecipeFingerprint = r.StampedFingerprint() }
