package abgate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"sweep/configs"
	"sweep/internal/inputfile"
)

// Reason names why a comparison is INCOMPLETE.
type Reason string

// Every Reason a Problem can carry.
const (
	ReasonMissingScore    Reason = "missing-score-file"
	ReasonMissingResult   Reason = "missing-result-file"
	ReasonStale           Reason = "stale-file"
	ReasonHeaderMismatch  Reason = "header-mismatch"
	ReasonPartial         Reason = "partial-category"
	ReasonCaseSetMismatch Reason = "case-set-mismatch"
	ReasonInfraErrorRate  Reason = "infra-error-rate"
	ReasonUnreadable      Reason = "unreadable-file"
	// ReasonForeignFile: a score file's failure row names another model
	// or category than the path it was read from (a file copied or moved
	// from another run).
	ReasonForeignFile Reason = "foreign-file"
	// ReasonRunFailed: a stage that produces the root's files failed (the
	// arm's server did not start or died before bfcl generate ended, bfcl
	// generate or evaluate exited non-zero); the leg runner reports it
	// through Options.Problems, which come first in the report.
	ReasonRunFailed Reason = "run-failed"
	// ReasonInterrupted: the leg was interrupted (a signal) before its
	// report; the leg runner's report then holds this one problem, of
	// the whole leg (arm and category Every), which names the complete and
	// incomplete replicates and how to resume.
	ReasonInterrupted Reason = "interrupted"
)

// Problem is one reason the comparison cannot be trusted. Arm is "a" or
// "b" (Every: the whole leg); Category is a BFCL category (Every: all of
// the arm's); Detail names the file (and line) and what was found.
type Problem struct {
	Arm      string `json:"arm"`
	Root     string `json:"root"`
	Category string `json:"category"`
	Reason   Reason `json:"reason"`
	Detail   string `json:"detail"`
}

// Every is a Problem's Arm for a problem of the whole leg, and its
// Category for one of every category of its arm.
const Every = "*"

// String is the problem as the reports list it, Every in words:
// "run-failed: every category, arm a (ROOT): DETAIL", "interrupted: the
// leg (DIR): DETAIL".
func (p Problem) String() string {
	if p.Arm == Every && p.Category == Every {
		return fmt.Sprintf("%s: the leg (%s): %s", p.Reason, p.Root, p.Detail)
	}
	arm := "arm " + p.Arm
	if p.Arm == Every {
		arm = "the leg"
	}
	return fmt.Sprintf("%s: %s, %s (%s): %s", p.Reason, p.categoryText(), arm, p.Root, p.Detail)
}

// categoryText is p's Category, Every in words ("every category").
func (p Problem) categoryText() string {
	if p.Category == Every {
		return "every category"
	}
	return p.Category
}

// Outcome is one case's verdict in one root.
type Outcome int8

// Case verdicts. InfraError is a result row whose "result" is a string
// starting with "Error during inference": never a pass, whatever the
// score file says.
const (
	Fail Outcome = iota
	Pass
	InfraError
)

// InfraErrorPrefix starts the "result" string BFCL writes when the
// request to the model failed.
const InfraErrorPrefix = "Error during inference"

// MaxInfraErrorRate is the largest accepted share of a result file's rows
// that are infrastructure errors (exactly 5 % is fine).
const MaxInfraErrorRate = 0.05

// RootCategory is one category as read from one BFCL_PROJECT_ROOT.
type RootCategory struct {
	Root string
	// IDs are the result file's case ids in file order.
	IDs      []string
	Outcomes map[string]Outcome
	// InfraErrors counts the rows with an InfraErrorPrefix result.
	InfraErrors int
}

// ReadOptions tune ReadRoot.
type ReadOptions struct {
	// Since, when not zero, makes a result or score file modified strictly
	// before it a stale-file problem.
	Since time.Time
	// SinceOf, when it holds a root, is that root's Since, in place of
	// Since (sweep ab run resumed: a kept root was made by an earlier
	// run, from the instant its record gives).
	SinceOf map[string]time.Time
	// AllowPartial accepts a result file with fewer rows than BFCL's
	// dataset (but never more).
	AllowPartial bool
}

// ReadRoot reads category c of model from one BFCL_PROJECT_ROOT by its
// exact paths (ResultPath, ScorePath), never a glob. It returns nil data
// when a file is missing or unreadable; other problems (stale, header,
// partial, infra-error rate) come with the data. arm labels the problems.
func ReadRoot(root, model, arm string, c Category, o ReadOptions) (*RootCategory, []Problem) {
	prob := func(r Reason, format string, a ...any) Problem {
		return Problem{Arm: arm, Root: root, Category: c.Name, Reason: r, Detail: fmt.Sprintf(format, a...)}
	}
	resultFile := filepath.Join(root, filepath.FromSlash(ResultPath(model, c)))
	scoreFile := filepath.Join(root, filepath.FromSlash(ScorePath(model, c)))
	var probs []Problem
	rows, rerr := readResult(resultFile)
	sc, serr := readScore(scoreFile)
	for _, e := range []struct {
		err     error
		file    string
		missing Reason
	}{{rerr, resultFile, ReasonMissingResult}, {serr, scoreFile, ReasonMissingScore}} {
		switch {
		case e.err == nil:
		case errors.Is(e.err, fs.ErrNotExist):
			probs = append(probs, prob(e.missing, "%s does not exist", e.file))
		default:
			probs = append(probs, prob(ReasonUnreadable, "%v", e.err))
		}
	}
	if rerr != nil || serr != nil {
		return nil, probs
	}
	since := o.Since
	if t, ok := o.SinceOf[root]; ok {
		since = t
	}
	if !since.IsZero() {
		for _, f := range []struct {
			file string
			mod  time.Time
		}{{resultFile, rows.mod}, {scoreFile, sc.mod}} {
			if f.mod.Before(since) {
				probs = append(probs, prob(ReasonStale, "%s was modified at %s, before --since %s: a file of an earlier run; use a fresh root",
					f.file, f.mod.UTC().Format(time.RFC3339), since.UTC().Format(time.RFC3339)))
			}
		}
	}
	n := len(rows.ids)
	if sc.total != n {
		probs = append(probs, prob(ReasonHeaderMismatch, "%s:1: total_count is %d but %s has %d rows", scoreFile, sc.total, resultFile, n))
	}
	if sc.total-sc.correct != len(sc.failed) {
		probs = append(probs, prob(ReasonHeaderMismatch, "%s:1: total_count - correct_count is %d but the file lists %d failed cases",
			scoreFile, sc.total-sc.correct, len(sc.failed)))
	}
	if p, ok := foreignRow(sc.failed, ModelDir(model), c.Name); ok {
		probs = append(probs, prob(ReasonForeignFile, "%s:%s: the file comes from another run; use the score file bfcl evaluate wrote for this model and category", scoreFile, p))
	}
	for _, f := range sc.failed {
		if _, ok := rows.infra[f.id]; !ok {
			probs = append(probs, prob(ReasonHeaderMismatch, "%s:%d: failed case %q is not in %s", scoreFile, f.line, f.id, resultFile))
			break
		}
	}
	if n == 0 {
		probs = append(probs, prob(ReasonPartial, "%s has no cases: the generate stage wrote nothing for this category", resultFile))
	} else if n != c.Size && !(o.AllowPartial && n < c.Size) {
		hint := "rerun the category in full, or pass --allow-partial to compare the cases present"
		if n > c.Size {
			hint = "the file does not come from this BFCL version's dataset"
		}
		probs = append(probs, prob(ReasonPartial, "%s has %d cases, BFCL's dataset has %d: %s", resultFile, n, c.Size, hint))
	}
	rc := &RootCategory{Root: root, IDs: rows.ids, Outcomes: make(map[string]Outcome, n)}
	failed := make(map[string]bool, len(sc.failed))
	for _, f := range sc.failed {
		failed[f.id] = true
	}
	for _, id := range rows.ids {
		switch {
		case rows.infra[id]:
			rc.Outcomes[id] = InfraError
			rc.InfraErrors++
		case failed[id]:
			rc.Outcomes[id] = Fail
		default:
			rc.Outcomes[id] = Pass
		}
	}
	if n > 0 && float64(rc.InfraErrors) > MaxInfraErrorRate*float64(n) {
		probs = append(probs, prob(ReasonInfraErrorRate, "%s: %d of %d rows (%.1f %%) are %q: above %.0f %%; check the server log",
			resultFile, rc.InfraErrors, n, 100*float64(rc.InfraErrors)/float64(n), InfraErrorPrefix, 100*MaxInfraErrorRate))
	}
	return rc, probs
}

// foreignRow reports the first failure row whose model_name or
// test_category is not modelDir or category (BFCL writes both in every
// failure row) as "line: what".
func foreignRow(failed []failedCase, modelDir, category string) (string, bool) {
	for _, f := range failed {
		for _, k := range []struct {
			key  string
			got  *string
			want string
		}{{"model_name", f.model, modelDir}, {"test_category", f.category, category}} {
			switch {
			case k.got == nil:
				return fmt.Sprintf("%d: failure row's %s is missing, want %q", f.line, k.key, k.want), true
			case *k.got != k.want:
				return fmt.Sprintf("%d: failure row's %s is %q, want %q", f.line, k.key, *k.got, k.want), true
			}
		}
	}
	return "", false
}

type resultRows struct {
	ids   []string
	infra map[string]bool // every id; true for infrastructure errors
	mod   time.Time
}

type failedCase struct {
	id   string
	line int
	// model and category are the row's model_name and test_category (nil:
	// not in the row).
	model, category *string
}

type scoreFile struct {
	total, correct int
	failed         []failedCase
	mod            time.Time
}

// readResult reads a BFCL result file: JSON Lines of {"id", "result", ...}.
func readResult(file string) (*resultRows, error) {
	rr := &resultRows{infra: map[string]bool{}}
	first := map[string]int{}
	mod, _, err := eachLine(file, func(line int, raw []byte) error {
		var row struct {
			ID     *string         `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(raw, &row); err != nil {
			return fmt.Errorf("want one JSON object per line: %w", err)
		}
		if row.ID == nil || *row.ID == "" {
			return errors.New(`want a string "id" in every row`)
		}
		id := *row.ID
		if l, dup := first[id]; dup {
			return fmt.Errorf("id %q again (first at line %d)", id, l)
		}
		first[id] = line
		var s string
		rr.infra[id] = len(row.Result) > 0 && row.Result[0] == '"' &&
			json.Unmarshal(row.Result, &s) == nil && strings.HasPrefix(s, InfraErrorPrefix)
		rr.ids = append(rr.ids, id)
		return nil
	})
	rr.mod = mod
	return rr, err
}

// readScore reads a BFCL score file: a header line, then one row per failed
// case.
func readScore(file string) (*scoreFile, error) {
	sc := &scoreFile{}
	seen := map[string]int{}
	header := true
	mod, lines, err := eachLine(file, func(line int, raw []byte) error {
		if header {
			header = false
			var h struct {
				Total   *int `json:"total_count"`
				Correct *int `json:"correct_count"`
			}
			if err := json.Unmarshal(raw, &h); err != nil || h.Total == nil || h.Correct == nil {
				return errors.New(`want the header {"accuracy", "correct_count", "total_count"} with integer counts`)
			}
			sc.total, sc.correct = *h.Total, *h.Correct
			return nil
		}
		var row struct {
			ID       *string `json:"id"`
			Model    *string `json:"model_name"`
			Category *string `json:"test_category"`
		}
		if err := json.Unmarshal(raw, &row); err != nil {
			return fmt.Errorf("want one JSON object per line: %w", err)
		}
		if row.ID == nil || *row.ID == "" {
			return errors.New(`want a string "id" in every failure row`)
		}
		if l, dup := seen[*row.ID]; dup {
			return fmt.Errorf("failed case %q again (first at line %d)", *row.ID, l)
		}
		seen[*row.ID] = line
		sc.failed = append(sc.failed, failedCase{id: *row.ID, line: line, model: row.Model, category: row.Category})
		return nil
	})
	if err == nil && lines == 0 {
		err = fmt.Errorf("%s: empty file: want a header line", file)
	}
	sc.mod = mod
	return sc, err
}

// eachLine calls fn with every non-blank line of file (1-based numbers)
// and returns the file's modification time and the number of non-blank
// lines. Errors from fn are prefixed with file:line:column (the column
// of the JSON's mistake, else the row's first byte); a missing file
// wraps fs.ErrNotExist.
func eachLine(file string, fn func(line int, raw []byte) error) (time.Time, int, error) {
	f, err := inputfile.Open(file, inputfile.BFCL)
	if err != nil {
		return time.Time{}, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return time.Time{}, 0, err
	}
	if st.IsDir() {
		return time.Time{}, 0, fmt.Errorf("%s: is a directory, want a JSON Lines file", file)
	}
	r := bufio.NewReaderSize(f, 1<<16)
	lines := 0
	for n := 1; ; n++ {
		raw, rerr := r.ReadBytes('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return time.Time{}, lines, &configs.Error{File: file, Line: n, Err: rerr}
		}
		lead := len(raw) - len(bytes.TrimLeft(raw, " \t\r\n"))
		if raw = bytes.TrimSpace(raw); len(raw) > 0 {
			lines++
			if err := fn(n, raw); err != nil {
				return time.Time{}, lines, &configs.Error{File: file, Line: n, Col: lead + jsonColumn(err), Err: err}
			}
		}
		if rerr != nil {
			break
		}
	}
	return st.ModTime(), lines, nil
}

// jsonColumn is the 1-based column, in a row that starts at column 1, of
// the byte where encoding/json found err, or 1 when err is about the row
// as a whole.
func jsonColumn(err error) int {
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return max(1, int(se.Offset))
	}
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		return max(1, int(te.Offset))
	}
	return 1
}
