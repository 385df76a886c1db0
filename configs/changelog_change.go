package configs

import (
	"bytes"
	"regexp"
	"strings"
	"sweep/internal/textdiff"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// prURL matches a canonical GitHub pull request URL.
var prURL = regexp.MustCompile(`^https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/pull/[0-9]+$`)

// prPlaceholder matches the placeholders a new entry may carry until its PR
// number is known: XXX, or a pull URL ending in /pull/XXX.
var prPlaceholder = regexp.MustCompile(`^(XXX|https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/pull/XXX)$`)

// entryStart is how every top-level changelog entry begins.
const entryStart = "- config-keys:"

// CheckChangelog parses a whole perf-changelog.yaml and applies the
// file-level rules on top of ParseChangelog's schema: UTF-8 with no tabs,
// CR or NUL bytes, a final newline, and every entry starting with a
// "- config-keys:" line at column 1.
// maxDiffEdits bounds the line diff of a changelog change; beyond it the
// files are too different to explain line by line.
const maxDiffEdits = 2000

func CheckChangelog(name string, data []byte) ([]ChangelogEntry, error) {
	d := &decoder{file: name}
	entries := d.checkChangelogFile(data)
	if len(d.errs) > 0 {
		return nil, joinErrors(d.errs)
	}
	return entries, nil
}

func (d *decoder) checkChangelogFile(data []byte) []ChangelogEntry {
	d.byteRules(data)
	if len(d.errs) > 0 {
		return nil // YAML errors on such bytes would only repeat the cause
	}
	root := d.parseDocument(data)
	entries := d.changelogRoot(root)
	if root != nil && root.Kind == yaml.SequenceNode {
		lines := strings.Split(string(data), "\n")
		for i, it := range root.Content {
			line := ""
			if it.Line-1 < len(lines) {
				line = lines[it.Line-1]
			}
			if it.Column != 3 || !strings.HasPrefix(line, entryStart) {
				d.errAt(it, indexPath("entry", i+1), "each entry must start with a %q line at column 1 (config-keys first, list item not indented)", entryStart)
			}
		}
	}
	return entries
}

// byteRules checks encoding-level rules and reports each offending line.
func (d *decoder) byteRules(data []byte) {
	if len(data) == 0 {
		return
	}
	if !utf8.Valid(data) {
		line := 1 + bytes.Count(data[:firstInvalidUTF8(data)], []byte("\n"))
		d.errAt(posNode(Pos{Line: line, Col: 1}), "", "file is not valid UTF-8")
	}
	for i, line := range bytes.Split(data, []byte("\n")) {
		for _, bad := range []struct {
			b    byte
			what string
		}{{'\t', "a tab; indent with spaces"}, {'\r', "a CR byte; use LF line endings"}, {0, "a NUL byte"}} {
			if c := bytes.IndexByte(line, bad.b); c >= 0 {
				d.errAt(posNode(Pos{Line: i + 1, Col: c + 1}), "", "line contains %s", bad.what)
			}
		}
	}
	if data[len(data)-1] != '\n' {
		d.errAt(posNode(Pos{Line: bytes.Count(data, []byte("\n")) + 1, Col: 1}), "", "file does not end with a newline; add one after the last line")
	}
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// ChangelogChange is the result of comparing two versions of the changelog.
type ChangelogChange struct {
	// Added lists the entries appended at the tail, positioned in the head file.
	Added []ChangelogEntry
	// Corrections counts historical pr-link lines that were corrected.
	Corrections int
	// Head lists every entry of the head file.
	Head []ChangelogEntry
}

// CheckChangelogChange applies the append-only rules to a change of
// perf-changelog.yaml from base to head (InferenceX enforces them when a PR
// is merged; sweep enforces them on every run):
//
//   - head passes CheckChangelog;
//   - historical bytes are unchanged: every base line is still there, in
//     place; a deleted or rewritten line is reported with its base line
//     number and quoted;
//   - the only edit allowed to an old entry is correcting its "  pr-link:"
//     line to a canonical pull request URL, and corrections are not mixed
//     with new entries;
//   - new entries are appended at the tail, each separated from the one
//     before by exactly one empty line, and the file ends with one newline;
//   - a new entry's pr-link is a pull request URL or an XXX placeholder.
//
// Every problem is reported (errors.Join of *Error); base problems are
// positioned in base.Name, the rest in head.Name.
func CheckChangelogChange(base, head Source) (*ChangelogChange, error) {
	hd := &decoder{file: head.Name}
	headEntries := hd.checkChangelogFile(head.Data)
	bd := &decoder{file: base.Name}
	baseEntries, baseErr := ParseChangelog(base.Name, base.Data)
	if baseErr != nil {
		bd.errAt(nil, "", "the base changelog does not parse, so the change cannot be checked: %v", firstLine(baseErr))
	}
	ch := &ChangelogChange{Head: headEntries}
	if baseErr == nil {
		bd.compareChangelogs(hd, base.Data, head.Data, baseEntries, headEntries, ch)
	}
	errs := append(bd.errs, hd.errs...)
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	return ch, nil
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " (and more)"
	}
	return s
}

// splitLines splits data into lines without their "\n"; a final newline
// does not start an extra line.
func splitLines(data []byte) []string {
	s := string(data)
	s = strings.TrimSuffix(s, "\n")
	if s == "" && len(data) <= 1 {
		return nil
	}
	return strings.Split(s, "\n")
}

// compareChangelogs runs the line-level rules. bd records problems in the
// base file, hd in the head file.
func (bd *decoder) compareChangelogs(hd *decoder, baseData, headData []byte, baseEntries, headEntries []ChangelogEntry, ch *ChangelogChange) {
	if len(baseData) > 0 && baseData[len(baseData)-1] != '\n' {
		bd.errAt(posNode(Pos{Line: bytes.Count(baseData, []byte("\n")) + 1, Col: 1}), "",
			"the base changelog does not end with a newline; fix that in its own change before appending")
		return
	}
	a, b := splitLines(baseData), splitLines(headData)
	ops, ok := textdiff.Lines(a, b, maxDiffEdits)
	if !ok {
		hd.errAt(nil, "", "head differs from base in more than %d lines; perf-changelog.yaml is append-only: restore the base bytes and append new entries at the end", maxDiffEdits)
		return
	}
	tailStart := -1 // first head line (0-based) of the appended tail
	for i := 0; i < len(ops); {
		if ops[i].Kind == '=' {
			i++
			continue
		}
		j := i
		var del, ins []textdiff.Op
		for j < len(ops) && ops[j].Kind != '=' {
			if ops[j].Kind == '-' {
				del = append(del, ops[j])
			} else {
				ins = append(ins, ops[j])
			}
			j++
		}
		i = j
		atEnd := j == len(ops) // the hunk runs to the end of both files
		paired := 0
		if len(del) > 0 && len(ins) >= len(del) && allPRLinkPairs(a, b, del, ins[:len(del)]) {
			paired = len(del)
			for k := range del {
				oldLink := strings.TrimSpace(strings.TrimPrefix(a[del[k].A], "  pr-link:"))
				newLink := strings.TrimSpace(strings.TrimPrefix(b[ins[k].B], "  pr-link:"))
				switch {
				case oldLink == newLink:
					hd.errAt(posNode(Pos{Line: ins[k].B + 1, Col: 1}), "pr-link",
						"pr-link line reformatted without changing the link (base line %d: %q); historical bytes are immutable, restore the line", del[k].A+1, a[del[k].A])
				case !prURL.MatchString(newLink):
					hd.errAt(posNode(Pos{Line: ins[k].B + 1, Col: 12}), "pr-link",
						"pr-link correction %q is not a pull request URL; a corrected link must be https://github.com/<owner>/<repo>/pull/<number>", newLink)
				default:
					ch.Corrections++
				}
			}
		} else {
			for _, op := range del {
				what := "deleted or rewritten"
				if a[op.A] == "" {
					what = "deleted (an empty line)"
				}
				bd.errAt(posNode(Pos{Line: op.A + 1, Col: 1}), "",
					"line %s in head %s: %q; perf-changelog.yaml is append-only: restore the line byte for byte (only a pr-link line may be corrected)",
					what, hd.file, a[op.A])
			}
		}
		rest := ins[paired:]
		if len(rest) == 0 {
			continue
		}
		if atEnd {
			tailStart = rest[0].B
			continue
		}
		for _, op := range rest {
			hd.errAt(posNode(Pos{Line: op.B + 1, Col: 1}), "",
				"line inserted among historical entries (before base line %d): %q; append new entries at the end of the file", op.A+1, b[op.B])
		}
	}
	// Entries that start in the tail are new.
	var added []ChangelogEntry
	if tailStart >= 0 {
		for _, e := range headEntries {
			if e.Pos.Line-1 >= tailStart {
				added = append(added, e)
			}
		}
		hd.checkTail(b, tailStart)
	}
	if ch.Corrections > 0 && tailStart >= 0 {
		hd.errAt(posNode(Pos{Line: tailStart + 1, Col: 1}), "",
			"do not mix pr-link corrections of historical entries with new entries; make them separate changes")
	}
	if headEntries != nil && len(headEntries) != len(baseEntries)+len(added) && len(hd.errs) == 0 && len(bd.errs) == 0 {
		hd.errAt(nil, "", "head has %d entries but base has %d and %d were appended; entries may only be appended", len(headEntries), len(baseEntries), len(added))
	}
	if len(added) > 1 {
		appendOnly := 0
		for _, e := range added {
			if e.AppendOnly {
				appendOnly++
			}
		}
		if appendOnly > 0 && appendOnly < len(added) {
			hd.errAt(posNode(added[0].Pos), "append-only",
				"%d of the %d new entries are append-only; append-only entries cannot share a sweep with regular entries, add them in separate changes", appendOnly, len(added))
		}
	}
	for _, e := range added {
		link := e.PRLink
		if !prURL.MatchString(link) && !prPlaceholder.MatchString(link) {
			hd.errAt(posNode(e.prLinkPos()), "pr-link",
				"new entry's pr-link %q must be a pull request URL (https://github.com/<owner>/<repo>/pull/<number>) or the placeholder XXX", link)
		}
	}
	ch.Added = added
}

// prLinkPos returns the position of the entry's pr-link value, or the entry.
func (e ChangelogEntry) prLinkPos() Pos {
	if e.PRLinkPos.Line > 0 {
		return e.PRLinkPos
	}
	return e.Pos
}

func allPRLinkPairs(a, b []string, del, ins []textdiff.Op) bool {
	for k := range del {
		if !strings.HasPrefix(a[del[k].A], "  pr-link:") || !strings.HasPrefix(b[ins[k].B], "  pr-link:") {
			return false
		}
	}
	return true
}

// checkTail checks the layout of the appended lines b[start:].
func (d *decoder) checkTail(b []string, start int) {
	first := start
	// A new file may open with a comment header; appended text may not.
	for first < len(b) && (b[first] == "" || (start == 0 && strings.HasPrefix(b[first], "#"))) {
		first++
	}
	if first == len(b) {
		d.errAt(posNode(Pos{Line: start + 1, Col: 1}), "", "only empty lines were appended; the file must end right after its last entry")
		return
	}
	if !strings.HasPrefix(b[first], entryStart) {
		d.errAt(posNode(Pos{Line: first + 1, Col: 1}), "",
			"line appended to the last historical entry: %q; historical entries are immutable, append a new entry starting with %q instead", b[first], entryStart)
		return
	}
	for i := first; i < len(b); i++ {
		if !strings.HasPrefix(b[i], entryStart) {
			continue
		}
		blanks := 0
		for j := i - 1; j >= 0 && b[j] == ""; j-- {
			blanks++
		}
		if blanks != 1 && i > 0 {
			d.errAt(posNode(Pos{Line: i + 1, Col: 1}), "",
				"new entry is preceded by %d empty lines; separate entries with exactly one empty line", blanks)
		}
	}
	if b[len(b)-1] == "" {
		d.errAt(posNode(Pos{Line: len(b), Col: 1}), "", "the file ends with an empty line; end it with a single newline after the last entry")
	}
}
