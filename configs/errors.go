package configs

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
)

// Error is one problem in an input file, at a position: the one shape of
// positioned error in sweep (config YAML, aiperf artifacts, load traces,
// matrix expansion, result files, sweep journals, bfcl's JSON Lines, the
// master-config edits of a proposal). Msg says what is wrong and what is
// allowed or how to fix it. Line and Col are 1-based; 0 means unknown (a
// whole-file problem, or a format that counts lines only). Loaders return
// every Error they find joined with errors.Join; use Errors to get them
// back.
type Error struct {
	File string
	Line int
	Col  int
	Key  string // dotted key path, e.g. dsr1-fp4-mi355x-sglang.scenarios.fixed-seq-len[0].isl; or a JSON field
	Msg  string
	// Err, when set, is the cause (errors.Is and errors.As see it); an
	// empty Msg then prints Err.
	Err error
}

// Error formats the problem as file:line:col: key: msg, leaving out an
// unknown column, line or key.
func (e *Error) Error() string {
	b := []byte(e.File)
	if e.Line > 0 {
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(e.Line), 10)
		if e.Col > 0 {
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(e.Col), 10)
		}
	}
	b = append(b, ": "...)
	if e.Key != "" {
		b = append(b, e.Key...)
		b = append(b, ": "...)
	}
	if e.Msg == "" && e.Err != nil {
		return string(append(b, e.Err.Error()...))
	}
	return string(append(b, e.Msg...))
}

// Unwrap returns the cause, nil when there is none.
func (e *Error) Unwrap() error { return e.Err }

// Errors flattens err (as returned by this package's loaders, possibly
// wrapped or joined) into its *Error values. Errors that are not *Error are
// left out; a nil err gives nil.
func Errors(err error) []*Error {
	var out []*Error
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if ce, ok := e.(*Error); ok {
			out = append(out, ce)
			return
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				walk(x)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return out
}

// joinErrors sorts errs by file (in first-seen order), line and column and
// joins them; nil when errs is empty.
func joinErrors(errs []*Error) error {
	if len(errs) == 0 {
		return nil
	}
	fileRank := map[string]int{}
	for _, e := range errs {
		if _, ok := fileRank[e.File]; !ok {
			fileRank[e.File] = len(fileRank)
		}
	}
	sorted := slices.Clone(errs)
	slices.SortStableFunc(sorted, func(a, b *Error) int {
		return cmp.Or(
			cmp.Compare(fileRank[a.File], fileRank[b.File]),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Col, b.Col),
		)
	})
	out := make([]error, len(sorted))
	for i, e := range sorted {
		out[i] = e
	}
	return errors.Join(out...)
}
