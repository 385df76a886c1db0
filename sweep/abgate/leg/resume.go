package leg

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sweep/configs"
	"sweep/internal/atomicfile"
	"sweep/internal/inputfile"
	"sweep/internal/plural"
	"sweep/internal/usage"
	"sweep/sweep/abgate"
)

// recordFormat is the format of LegFile and of the replicate records.
const recordFormat = 1

// legStamp is LegFile's content: the leg directory's mark, with what
// each arm's replicates are made with.
type legStamp struct {
	Format int `json:"format"`
	// Arms are arm a's and arm b's Made.
	Arms []Made `json:"arms"`
}

// Replicate is the record of one attempt at a replicate of an arm
// (RecordFile beside its root), written atomically when the attempt
// starts and again when it ends, so a killed leg leaves each attempt's
// record whole: started and not ended, or ended.
type Replicate struct {
	Format int `json:"format"`
	// Arm is the arm's label; Replicate (1-based) and Attempt (1-based,
	// AttemptRoot) place the root.
	Arm       string    `json:"arm"`
	Replicate int       `json:"replicate"`
	Attempt   int       `json:"attempt"`
	Started   time.Time `json:"started"`
	// Ended is when the attempt's last bfcl stage ended (nil: it did not
	// end: interrupted or killed).
	Ended *time.Time `json:"ended,omitempty"`
	// Problems are the attempt's run-failed problems (none: bfcl models,
	// generate and evaluate succeeded against a live server).
	Problems []abgate.Problem `json:"problems,omitempty"`
	Made     Made             `json:"made"`
}

// readRecord reads a replicate's record; nil when there is none.
func readRecord(file string) (*Replicate, error) {
	var r Replicate
	_, err := configs.ReadRecordJSON(file, &r, "the replicate record sweep ab run writes")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// writeRecord writes rec beside root, atomically.
func writeRecord(root string, rec *Replicate) error {
	rec.Format = recordFormat
	return atomicfile.WriteJSON(RecordFile(root), rec)
}

// replicateState is what a leg's directory holds of one replicate of an
// arm.
type replicateState struct {
	rep int
	// kept is the root of the replicate's complete attempt ("" for none),
	// keptRec its record.
	kept    string
	keptRec *Replicate
	// fresh and attempt are the root and number of its next attempt, one
	// no earlier attempt wrote anything for.
	fresh   string
	attempt int
	// redo lists its incomplete attempts: "b/bfcl-r1 (interrupted: ...)".
	redo []string
}

// scanReplicates reads what dir holds of arm's replicates 1..reps: each
// attempt's record, the complete one (attemptIncomplete) kept. An
// attempt whose record does not read is not complete: its replicate runs
// again in a fresh root, the record left as it is. An attempt made
// otherwise than made (madeDiff) is a *usage.Error naming the
// differences: its directory is another leg's or another setup's.
func scanReplicates(dir string, p *Plan, arm *Arm, made Made, reps int) ([]replicateState, error) {
	states := make([]replicateState, reps)
	for r := range reps {
		st := &states[r]
		st.rep = r + 1
		for n := 1; ; n++ {
			root := AttemptRoot(dir, arm.Label, st.rep, n)
			if !attemptUsed(root) {
				st.fresh, st.attempt = root, n
				break
			}
			rec, err := readRecord(RecordFile(root))
			if err != nil {
				st.redo = append(st.redo, fmt.Sprintf("%s (its record does not read: %v)", relTo(dir, root), err))
				continue
			}
			if rec != nil {
				if diffs := madeDiff(rec.Made, made); len(diffs) > 0 {
					return nil, madeOtherwise(dir, RecordFile(root), diffs)
				}
			}
			if why := attemptIncomplete(rec, root, p, arm.Label); why != "" {
				st.redo = append(st.redo, fmt.Sprintf("%s (%s)", relTo(dir, root), why))
				continue
			}
			st.kept, st.keptRec = root, rec
		}
	}
	return states, nil
}

// madeOtherwise refuses a leg directory one of whose records (file) says
// it was made otherwise: diffs.
func madeOtherwise(dir, file string, diffs []string) error {
	return usage.Refusef("--out %s holds a leg made otherwise than this one (%s): %s: give another --out, or run the leg as it was made to resume it",
		dir, relTo(dir, file), strings.Join(diffs, "; "))
}

// attemptUsed says whether an attempt wrote anything for root: the root,
// its record, its registry entry or its first log.
func attemptUsed(root string) bool {
	for _, path := range []string{root, RecordFile(root), PythonDir(root), LogFile(root, "models")} {
		if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	return false
}

// attemptIncomplete says why the attempt rec records at root is not a
// complete replicate ("" when it is): it has no record (its run did not
// start it), it did not end, a bfcl stage or the server failed, or the
// leg's report would not accept a category of the root: any problem
// abgate.ReadRoot finds there, read as the report reads a kept root
// (readOptions, stale before the attempt started), is the first one's
// detail (a missing or unreadable file, a score file that contradicts
// its result file, a partial category, too many inference errors).
func attemptIncomplete(rec *Replicate, root string, p *Plan, label string) string {
	switch {
	case rec == nil:
		return "no record " + filepath.Base(RecordFile(root))
	case rec.Ended == nil:
		return "interrupted: it did not end"
	case len(rec.Problems) > 0:
		return "run-failed: " + rec.Problems[0].Detail
	}
	for _, c := range p.Categories {
		if _, probs := abgate.ReadRoot(root, p.Leg.Model, label, c, readOptions(p, rec.since(), nil)); len(probs) > 0 {
			return probs[0].Detail
		}
	}
	return ""
}

// keptServer is what the server of an arm ran whose every replicate
// (states) is kept from an earlier run, each attempt started before
// since (this run's start): the first kept attempt's record of it, its
// ports by name (Made), since no server of this run served them and the
// ports the plan drew now were never used; marked Kept, so the report
// says so. It is nil when a replicate is
// this run's or is left to run: this run's server is the arm's then.
func keptServer(states []replicateState, since time.Time) *abgate.ArmServer {
	if len(states) == 0 {
		return nil
	}
	for _, st := range states {
		if st.kept == "" || !st.keptRec.Started.Before(since) {
			return nil
		}
	}
	s := states[0].keptRec.Made.Server
	s.Kept = true
	return &s
}

// since is the instant before which the files of rec's attempt are
// stale: its start, to the second (file systems with coarse timestamps).
func (r *Replicate) since() time.Time { return r.Started.Truncate(time.Second) }

// readOptions is how the leg's report reads its roots: a file modified
// before since is stale, or, in a root kept from an earlier run (sinceOf),
// before its attempt started; a partial category only as the leg allows.
func readOptions(p *Plan, since time.Time, sinceOf map[string]time.Time) abgate.ReadOptions {
	return abgate.ReadOptions{Since: since, SinceOf: sinceOf, AllowPartial: p.Leg.PartialEval}
}

// relTo is path relative to dir, or path when it is not below dir.
func relTo(dir, path string) string {
	if rel, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// legMade is what each of p's arms' replicates are made with now.
func legMade(p *Plan, simulated bool) legStamp {
	return legStamp{Format: recordFormat, Arms: []Made{madeOf(p, &p.Arms[0], simulated), madeOf(p, &p.Arms[1], simulated)}}
}

// CheckResume checks that dir, an earlier `sweep ab run`'s directory
// (LegFile), holds p's leg made as it would be made now (simulated or
// not): its LegFile and every replicate record. A difference is a
// *usage.Error naming each one.
func CheckResume(dir string, p *Plan, simulated bool) error {
	now := legMade(p, simulated)
	file := filepath.Join(dir, LegFile)
	data, err := inputfile.Read(file, inputfile.SmallJSON)
	if err != nil {
		return usage.Refusef("--out %s: %w", dir, err)
	}
	var was legStamp
	if err := configs.DecodeRecordJSON(file, data, &was, "the leg.json sweep ab run writes"); err != nil {
		return usage.Refusef("--out %s: %w: move the directory aside, or give another --out", dir, err)
	}
	if len(was.Arms) != len(now.Arms) {
		return usage.Refusef("--out %s: %s records %d arms, want %d: move the directory aside, or give another --out", dir, file, len(was.Arms), len(now.Arms))
	}
	// A difference both arms have (the categories, the leg's sampling) is
	// named once.
	var diffs []string
	arms := map[string][]string{}
	for i := range now.Arms {
		for _, d := range madeDiff(was.Arms[i], now.Arms[i]) {
			if arms[d] == nil {
				diffs = append(diffs, d)
			}
			arms[d] = append(arms[d], p.Arms[i].Label)
		}
	}
	if len(diffs) > 0 {
		for i, d := range diffs {
			diffs[i] = plural.Word(len(arms[d]), "arm", "arms") + " " + strings.Join(arms[d], " and ") + ": " + d
		}
		return madeOtherwise(dir, file, diffs)
	}
	for i := range p.Arms {
		if _, err := scanReplicates(dir, p, &p.Arms[i], now.Arms[i], p.Leg.Replicates); err != nil {
			return err
		}
	}
	return nil
}
