package main

import (
	"encoding/json"
	"io"
)

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
