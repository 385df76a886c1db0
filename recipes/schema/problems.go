package schema

import (
	"errors"
	"fmt"
)

// problems collects Errors for one parse or build.
type problems struct {
	s    *Schema
	list []*Error
}

func (p *problems) add(e *Error) {
	e.Tool, e.Version = p.s.Tool, p.s.Version
	if e.Severity == "" {
		e.Severity = SevError
	}
	if e.Spelling == e.Flag {
		e.Spelling = ""
	}
	p.list = append(p.list, e)
}

func (p *problems) errorf(kind Kind, flag, format string, a ...any) *Error {
	e := &Error{Kind: kind, Flag: flag, Msg: fmt.Sprintf(format, a...)}
	p.add(e)
	return e
}

// err joins the error-severity problems; warnings alone give nil.
func (p *problems) err() error {
	var errs []error
	for _, e := range p.list {
		if e.Severity == SevError {
			errs = append(errs, e)
		}
	}
	return errors.Join(errs...)
}
