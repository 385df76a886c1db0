package matrix

import (
	"bytes"
	"fmt"
	"strings"
	"sweep/internal/textdiff"
)

// DeletionError reports a line of the changelog that a change removed or
// rewrote; perf-changelog.yaml only ever grows.
type DeletionError struct {
	File string // the changelog, as named in the base
	Line int    // 1-based line number in the base
	Col  int    // 1-based column of the line's first non-blank character
	Text string // the deleted line, without its newline
}

func (e *DeletionError) Error() string {
	return fmt.Sprintf("%s:%d:%d: deletions are not allowed in the changelog; only additions are permitted; found deleted line: %s", e.File, e.Line, e.Col, e.Text)
}

// maxDiffCost bounds the edit distance diffLines explores; beyond it every
// remaining base line counts as deleted (the change is rejected anyway).
const maxDiffCost = 20000

// addedLines returns what "git diff base head" adds to the changelog, as
// process_changelog.py's get_added_lines reads it: the added lines joined
// with "\n", preceded by as many empty lines as head lines come before the
// first added line, so YAML positions are head line numbers. A removed
// line that is not blank is an error (*DeletionError), as are, like in
// the Python tool, none: lines whose text starts with "--" are not seen as
// deletions and added lines starting with "++" are dropped, because git's
// "---"/"+++" header test matches them.
func addedLines(baseName string, base, head []byte) (string, error) {
	a, b := splitLines(base), splitLines(head)
	// Trim the common prefix and suffix first, as git does; a pure append
	// never reaches the line diff.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	midA, midB := a[pre:len(a)-suf], b[pre:len(b)-suf]
	var deleted, added []int // indexes into a and b
	switch {
	case len(midA) == 0:
		for i := range midB {
			added = append(added, pre+i)
		}
	case len(midB) == 0:
		for i := range midA {
			deleted = append(deleted, pre+i)
		}
	default:
		del, ins := diffLines(midA, midB)
		for _, i := range del {
			deleted = append(deleted, pre+i)
		}
		for _, i := range ins {
			added = append(added, pre+i)
		}
	}
	for _, i := range deleted {
		text := strings.TrimSuffix(a[i], "\n")
		if strings.HasPrefix(text, "--") {
			continue // git's "---" header test skips it
		}
		if strings.TrimSpace(text) != "" {
			col := len(text) - len(strings.TrimLeft(text, " \t")) + 1
			return "", &DeletionError{File: baseName, Line: i + 1, Col: col, Text: text}
		}
	}
	var sb strings.Builder
	first := true
	for _, i := range added {
		text := strings.TrimSuffix(b[i], "\n")
		if strings.HasPrefix(text, "++") {
			continue
		}
		if first {
			sb.WriteString(strings.Repeat("\n", i))
			first = false
		} else {
			sb.WriteByte('\n')
		}
		sb.WriteString(text)
	}
	return sb.String(), nil
}

// splitLines splits data into lines that keep their "\n"; a last line
// without one differs from the same text with one, as it does for git.
func splitLines(data []byte) []string {
	var out []string
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			out = append(out, string(data))
			break
		}
		out = append(out, string(data[:i+1]))
		data = data[i+1:]
	}
	return out
}

// diffLines returns the indexes of the lines of a deleted and of b
// inserted by a shortest edit script from a to b (Myers' algorithm). Past
// maxDiffCost edits it gives up and reports all of a deleted and all of b
// inserted.
func diffLines(a, b []string) (deleted, inserted []int) {
	ops, ok := textdiff.Lines(a, b, maxDiffCost)
	if !ok {
		for i := range a {
			deleted = append(deleted, i)
		}
		for i := range b {
			inserted = append(inserted, i)
		}
		return deleted, inserted
	}
	for _, op := range ops {
		switch op.Kind {
		case '-':
			deleted = append(deleted, op.A)
		case '+':
			inserted = append(inserted, op.B)
		}
	}
	return deleted, inserted
}
