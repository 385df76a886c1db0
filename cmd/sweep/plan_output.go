package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"sweep/recipes"
)

// planFailure maps a planning error to the command's: a rejected plan
// says so, bad plan options are a usage error.
func planFailure(err error) error {
	if _, ok := errors.AsType[*recipes.PlanError](err); ok {
		return fmt.Errorf("plan rejected: %w", err)
	}
	if errors.Is(err, recipes.ErrInvalidOptions) {
		return &FlagError{Err: err}
	}
	return err
}

// writeIndentedJSON prints v as indented JSON and a newline, as every
// `sweep plan --format json` output is printed.
func writeIndentedJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}
