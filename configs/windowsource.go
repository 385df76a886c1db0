package configs

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
)

// DefaultWindowProvenanceFile is the embedded table of where each planned
// single-node agentic key's official windows came from, by InferenceX's
// own account (its header says how it was read).
const DefaultWindowProvenanceFile = "configs/window-provenance.csv"

// WindowAtKnee is the provenance of windows InferenceX chose around a
// knee, peak or capacity cliff measured on the hardware: the ones where a
// simulated knee's agreement with the window tests the simulation.
const WindowAtKnee = "knee"

// windowProvenances are the allowed provenances, in the order counts list
// them.
var windowProvenances = []string{WindowAtKnee, "cap", "mirrored", "other-kv", "unknown"}

// WindowProvenances returns the allowed provenances in the order counts
// list them: WindowAtKnee; "cap", a hard stop that is not at a knee;
// "mirrored", copied from another key's grid; "other-kv", measured with
// another KV-cache dtype than the key ships; "unknown", nothing said about
// where the list ends.
func WindowProvenances() []string { return slices.Clone(windowProvenances) }

// WindowSource is one key's row of a window-provenance table: where the
// official windows (conc-lists) of its agentic arms came from.
type WindowSource struct {
	Key string
	// Provenance is one of WindowProvenances.
	Provenance string
	// Evidence names the InferenceX PR with a short quote, or says that
	// it says nothing.
	Evidence string
	// Line is the row's line in its file.
	Line int
}

// ParseWindowProvenance reads a window-provenance table: a header
// key,provenance,evidence, then one row per key, each provenance one of
// WindowProvenances with its evidence; lines starting with # are
// comments. The rows come back in file order. Every bad row is a *Error
// at its line, naming the key; they are joined with errors.Join.
func ParseWindowProvenance(src Source) ([]WindowSource, error) {
	cr := csv.NewReader(strings.NewReader(string(src.Data)))
	cr.Comment = '#'
	cr.FieldsPerRecord = 3
	header, err := cr.Read()
	if err != nil {
		return nil, csvError(src.Name, err)
	}
	if want := []string{"key", "provenance", "evidence"}; !slices.Equal(header, want) {
		line, col := cr.FieldPos(0)
		return nil, &Error{File: src.Name, Line: line, Col: col, Msg: fmt.Sprintf("header %q, want %q", strings.Join(header, ","), strings.Join(want, ","))}
	}
	var rows []WindowSource
	var errs []error
	seen := map[string]int{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvError(src.Name, err)
		}
		line, _ := cr.FieldPos(0)
		s := WindowSource{Key: rec[0], Provenance: rec[1], Evidence: strings.TrimSpace(rec[2]), Line: line}
		bad := &Error{File: src.Name, Line: line, Key: s.Key}
		switch {
		case s.Key == "":
			bad.Msg = "empty key: give the config key the row is for"
		case seen[s.Key] > 0:
			bad.Msg = fmt.Sprintf("repeats line %d; keep one row per key", seen[s.Key])
		case !slices.Contains(windowProvenances, s.Provenance):
			_, col := cr.FieldPos(1)
			bad.Col, bad.Msg = col, fmt.Sprintf("provenance %q, want one of %s", s.Provenance, strings.Join(windowProvenances, ", "))
		case s.Evidence == "":
			bad.Msg = "no evidence; name the InferenceX PR and quote it, or say that it says nothing"
		default:
			bad = nil
		}
		if bad != nil {
			errs = append(errs, bad)
		}
		seen[s.Key] = line
		rows = append(rows, s)
	}
	return rows, errors.Join(errs...)
}

// csvError positions a CSV syntax error in file.
func csvError(file string, err error) error {
	if pe, ok := errors.AsType[*csv.ParseError](err); ok {
		msg := pe.Err.Error()
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			msg += ": want 3, key,provenance,evidence (quote an evidence holding a comma)"
		}
		return &Error{File: file, Line: pe.Line, Col: pe.Column, Msg: msg, Err: pe.Err}
	}
	if errors.Is(err, io.EOF) {
		return &Error{File: file, Msg: "empty: want a header key,provenance,evidence and a row per key", Err: err}
	}
	return &Error{File: file, Err: err}
}

// DefaultWindowProvenance reads the embedded window-provenance.csv
// (DefaultWindowProvenanceFile): the provenance of the shipped masters'
// planned single-node agentic keys, one row per key in the masters' order.
func DefaultWindowProvenance() ([]WindowSource, error) {
	data, err := fs.ReadFile(embedded, embeddedName(DefaultWindowProvenanceFile))
	if err != nil {
		return nil, fmt.Errorf("embedded %s: %w", DefaultWindowProvenanceFile, err)
	}
	return ParseWindowProvenance(Source{Name: DefaultWindowProvenanceFile, Data: data})
}
