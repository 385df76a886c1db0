package configs

import (
	"bytes"
	"errors"
	"io"
	"regexp"

	"gopkg.in/yaml.v3"
)

// yaml.v3 prints one line per syntax error, and for the parser's errors it
// is the line of the enclosing construct (0-based, so usually the line
// above it), not of the token that broke it: a bad indent at line 231
// inside a top-level mapping that starts at line 29 reads "line 28". The
// parser is a stream, so the line to report is the first one by which the
// document fails with the same message: every prefix of the file that
// includes it fails that way, none that ends before it does. syntaxPos
// finds it by bisecting prefixes of the file.

var yamlErrLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parserConstructs maps the problems yaml.v3's parser (parserc.go) reports
// with a context to the construct that context names. yaml.v3 reports the
// context's line 0-based for these; scanner errors get it 1-based.
var parserConstructs = map[string]string{
	"did not find expected key":           "block mapping",
	"did not find expected '-' indicator": "block sequence",
	"did not find expected ',' or ']'":    "flow sequence",
	"did not find expected ',' or '}'":    "flow mapping",
	"did not find expected node content":  "node",
	"found undefined tag handle":          "node",
}

// maxBisect bounds the file size syntaxPos bisects; larger files keep
// yaml.v3's line.
const maxBisect = 8 << 20

// syntaxPos returns the 1-based line and column where yaml.v3 fails on
// data with the error text want, or 0, 0 when no prefix reproduces it.
func syntaxPos(data []byte, want string) (line, col int) {
	if len(data) > maxBisect {
		return 0, 0
	}
	ends := lineEnds(data)
	// yaml.v3 returns syntax errors as plain strings (no type, no column),
	// so "the same failure" can only be told by its text.
	fails := func(n int) bool { // the first n bytes fail with want
		err := decodeAll(data[:n])
		return err != nil && err.Error() == want
	}
	// Smallest number of whole lines that fails.
	lo, hi := 1, len(ends)
	if hi == 0 || !fails(ends[hi-1]) {
		return 0, 0
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if fails(ends[mid-1]) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	line = lo
	start := 0
	if line > 1 {
		start = ends[line-2]
	}
	// Smallest prefix within the line that fails: the column of the
	// failing token (yaml.v3 needs at most the token's first bytes).
	b, e := start+1, ends[line-1]
	for b < e {
		mid := (b + e) / 2
		if fails(mid) {
			e = mid
		} else {
			b = mid + 1
		}
	}
	col = e - start
	// A failure at the line break (an empty or a short line) points at the
	// line's first non-blank byte instead.
	text := data[start:ends[line-1]]
	if first := len(text) - len(bytes.TrimLeft(text, " \t")); col > len(bytes.TrimRight(text, "\r\n")) || col <= first {
		col = first + 1
	}
	return line, col
}

// lineEnds returns the offset after each line of data (after its '\n').
func lineEnds(data []byte) []int {
	var ends []int
	for i, c := range data {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		ends = append(ends, len(data))
	}
	return ends
}

// decodeAll parses every document of data into nodes and returns the
// first error.
func decodeAll(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// blockColumn is the column of the first item on line (1-based) of data:
// its first non-blank byte, after any "- " sequence indicators when the
// item is a mapping key.
func blockColumn(data []byte, line int, key bool) int {
	ends := lineEnds(data)
	if line < 1 || line > len(ends) {
		return 1
	}
	start := 0
	if line > 1 {
		start = ends[line-2]
	}
	text := data[start:ends[line-1]]
	i := 0
	for i < len(text) && (text[i] == ' ' || text[i] == '\t' || (key && text[i] == '-' && i+1 < len(text) && text[i+1] == ' ')) {
		i++
	}
	return i + 1
}
