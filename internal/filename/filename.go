// Package filename checks names that sweep reads from files (plans, job
// files, matrices, configs) and then uses as one element of a path in a
// directory it was given: a result file name, a command file, a point's
// directory. A name that is a path ("../victim", "a/b", "/etc/x"), "." or
// "..", empty, or holds a control character could make sweep write or
// remove outside that directory, so it is refused before anything runs:
//
//	if err := filename.Check("result_filename", p.ResultFilename); err != nil {
//		return err
//	}
//	path := filepath.Join(dir, p.ResultFilename+".json")
package filename

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// Error is a name that is not a single path element. What names where it
// came from ("result_filename", "point ID").
type Error struct {
	What, Name string
	Msg        string
}

func (e *Error) Error() string {
	if e.Name == "" {
		return fmt.Sprintf("%s is empty: want a file name", e.What)
	}
	return fmt.Sprintf("%s %q %s", e.What, e.Name, e.Msg)
}

// ErrNotElement is what every *Error wraps.
var ErrNotElement = errors.New("not a single file name")

func (e *Error) Unwrap() error { return ErrNotElement }

// Check returns a *Error when name is not a single path element: empty,
// "." or "..", containing a slash or backslash, or a control character.
func Check(what, name string) error {
	msg := ""
	switch {
	case name == "":
	case name == "." || name == ".." || strings.ContainsAny(name, `/\`):
		msg = "must be a file name, not a path"
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		msg = "contains control characters"
	default:
		return nil
	}
	return &Error{What: what, Name: name, Msg: msg}
}
