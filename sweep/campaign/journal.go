package campaign

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"sweep/configs"
	"sweep/internal/atomicfile"
	"sweep/internal/inputfile"
	"sweep/metrics/result"
	"sweep/sweep/run"
)

// JournalFile is the journal's name in the sweep directory.
const JournalFile = run.SweepJournal

// Event kinds, as the journal's "event" field spells them.
const (
	EventSweepStart  = "sweep_start"
	EventSweepEnd    = "sweep_end"
	EventServerStart = "server_start"
	EventServerReady = "server_ready"
	EventServerStop  = "server_stop"
	EventPointStart  = "point_start"
	EventPointEnd    = "point_end"
	EventPointRedo   = "point_redo"
	EventPointSkip   = "point_skip"
	EventLeftover    = "leftover_stopped"
	// EventSearchEnd is an adaptive arm's search asking for no more
	// points (RunArm, after the arm's point_skip records; Run for an arm
	// a resume finds with nothing left to run). Never written when the
	// sweep is interrupted or killed; a later point_start of the arm (a
	// retry round) reopens its search (searchState).
	EventSearchEnd = "search_end"
)

// JournalFormat is the format of the records this binary writes, which
// every sweep_start record it writes gives (Record.Format): a new
// sweep's and each resume's, so that a journal that binaries of
// different formats wrote in turn is read per segment, each from its
// sweep_start to the next (ReadCoverage). 0 (no format): written before
// adaptive arms recorded their search's end (EventSearchEnd), so read
// without that record. 1: adaptive arms record it; only a new sweep's
// start gave the format, so a resume's start without one in a journal
// that starts with format 1 is of format 1. 2: as 1, every sweep_start
// gives it (a resume's without one is an older binary's: format 0).
// A field added to a record without changing what a segment's records
// mean needs no new format: every binary reads a point_end marked
// Recovered as the point_end it is, and one that does not record a
// setting of a start's Identity (EnvSetting) reads a directory that did
// as a different sweep's.
const JournalFormat = 2

// Point statuses in point_end records.
const (
	StatusOK          = "ok"
	StatusFailed      = "failed"
	StatusInterrupted = "interrupted"
	// StatusSkipped is a point adaptive discovery did not need.
	StatusSkipped = "skipped"
)

// Record is one journal line. Only the fields of its Event are set.
type Record struct {
	Time  time.Time `json:"time"`
	Event string    `json:"event"`
	// Identity is the sweep's command (sweep_start).
	Identity *Identity `json:"identity,omitempty"`
	// Format is the format of the journal's records from this one on
	// (sweep_start: its writer's JournalFormat; 0 from a binary that
	// recorded none: segmentFormat).
	Format int `json:"format,omitempty"`
	// Arms is the sweep's schedule (the sweep_start of a new sweep): each
	// arm's identity and points, so that a reader can tell of a point
	// that never ran which arm and concurrency it is (ReadCoverage).
	Arms []ArmPlan `json:"arms,omitempty"`
	// Arm is 1-based (0: not about an arm).
	Arm   int    `json:"arm,omitempty"`
	Point string `json:"point,omitempty"`
	// Index is the point's 1-based position in the sweep.
	Index   int   `json:"index,omitempty"`
	Conc    int   `json:"conc,omitempty"`
	Attempt int   `json:"attempt,omitempty"`
	GPUs    []int `json:"gpus,omitempty"`
	// Reused says the point ran on a server an earlier point started.
	Reused bool `json:"reused,omitempty"`
	// NoServer says the point got no server (point_start): the server
	// started for it did not start, or one started for an earlier point
	// of its arm's job did (RunArm); its point_end, failed or
	// interrupted, follows at once with why.
	NoServer bool `json:"no_server,omitempty"`
	// Probe says the point ran as an adaptive search's short bracketing
	// probe (point_start, point_end).
	Probe bool `json:"probe,omitempty"`
	// Recovered says a resume wrote the point_end (status ok, Reason
	// says so) of an attempt whose end the journal lacked while the
	// point's directory held its complete, valid result and a run.json
	// that says it finished ok: the sweep was killed between the two
	// writes, or the end's write failed. Older binaries read it as any
	// point_end.
	Recovered bool   `json:"recovered,omitempty"`
	Reason    string `json:"reason,omitempty"`
	// PIDs are the server's process ids (server_ready), for stopping
	// leftovers of a killed sweep.
	PIDs []int `json:"pids,omitempty"`
	// Tags are the server's process tags (proc.TagEnv, server_ready):
	// only processes carrying one are stopped as leftovers, so a pid
	// reused by an unrelated process is never signalled.
	Tags    []string `json:"tags,omitempty"`
	Status  string   `json:"status,omitempty"`
	Error   string   `json:"error,omitempty"`
	Seconds float64  `json:"seconds,omitempty"`
	Result  string   `json:"result,omitempty"` // relative to the sweep directory
	Metrics *Metrics `json:"metrics,omitempty"`

	// DiskFull says the point failed for want of space on the disk of
	// its directory (point_end, run.DiskFullError): "the disk holding
	// DIR is full (4.1 MB free)", or (DiskElsewhere) on another disk
	// that stays full, which every point needs too (/dev/shm, an
	// engine's cache). The sweep stops on it: no later point or retry
	// could run.
	DiskFull      string `json:"disk_full,omitempty"`
	DiskElsewhere bool   `json:"disk_elsewhere,omitempty"`
}

// ArmPlan is one arm of a sweep's schedule as its sweep_start records
// it.
type ArmPlan struct {
	// Arm is 1-based, as in Record.Arm.
	Arm int `json:"arm"`
	// Identity is the one its result files carry.
	Identity result.Identity `json:"identity"`
	Points   []PointPlan     `json:"points"`
}

// PointPlan is one point of an ArmPlan.
type PointPlan struct {
	Point string `json:"point"`
	Conc  int    `json:"conc"`
}

// planOf is the ArmPlan of each arm of s.
func planOf(s *Schedule) []ArmPlan {
	var out []ArmPlan
	for _, a := range s.Arms {
		ap := ArmPlan{Arm: a.Index + 1, Identity: a.Identity}
		for _, p := range a.Points {
			ap.Points = append(ap.Points, PointPlan{Point: p.ID, Conc: p.Conc()})
		}
		out = append(out, ap)
	}
	return out
}

// Metrics are a finished point's headline numbers. A nil pointer field
// was not measured.
type Metrics struct {
	// TputPerGPU is total token throughput per GPU (tok/s/GPU).
	TputPerGPU *float64 `json:"tput_per_gpu,omitempty"`
	// Interactivity is the median per-user decode rate (tok/s/user).
	Interactivity *float64 `json:"interactivity,omitempty"`
	// AL is the measured speculative acceptance length.
	AL *float64 `json:"acceptance_length,omitempty"`
	// CacheHitRate is the prefix cache hit rate of the point's load.
	CacheHitRate *float64 `json:"cache_hit_rate,omitempty"`
}

// Journal is the append-only event log of a sweep directory: one JSON
// object per line, synced after each record. Append is safe for
// concurrent use.
type Journal struct {
	mu sync.Mutex
	f  *os.File
	// w is where records go (f, or a test's failing writer).
	w    io.Writer
	sync func() error
	// end is the length of the complete records; torn says a failed
	// write may have left part of a record after it, which the next
	// Append removes first.
	end  int64
	torn bool
}

// OpenJournal opens (creating) dir's journal for appending and returns the
// records already in it. A last line without its newline (a record cut
// short by a kill) is dropped from the file; any other unreadable line is
// an error naming it.
func OpenJournal(dir string) (*Journal, []Record, error) {
	path := filepath.Join(dir, JournalFile)
	f, err := atomicfile.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return nil, nil, err
	}
	// A FIFO opened read-write does not block the open but blocks the
	// read: only a regular file within inputfile.Journal is read.
	in, err := inputfile.Wrap(f, inputfile.Journal)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	data, err := in.ReadAll()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	recs, keep, err := parseJournal(path, data)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if keep < len(data) {
		if err := f.Truncate(int64(keep)); err != nil {
			f.Close()
			return nil, nil, err
		}
	}
	if _, err := f.Seek(int64(keep), io.SeekStart); err != nil {
		f.Close()
		return nil, nil, err
	}
	return &Journal{f: f, w: f, sync: f.Sync, end: int64(keep)}, recs, nil
}

// parseJournal decodes data and returns the records and the length of the
// data that holds complete records.
func parseJournal(path string, data []byte) ([]Record, int, error) {
	var recs []Record
	off := 0
	line := 0
	for off < len(data) {
		line++
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			return recs, off, nil // truncated last record: ignored
		}
		text := data[off : off+nl]
		if len(bytes.TrimSpace(text)) > 0 {
			var r Record
			err := json.Unmarshal(text, &r)
			if err != nil {
				// A record cut short by a failed write (ENOSPC) with the
				// next one appended to it by an older sweep: the cut
				// record's caller saw its error; the next one counts.
				if i := bytes.LastIndex(text, []byte(`{"time":`)); i > 0 && json.Unmarshal(text[i:], &r) == nil {
					err = nil
				}
			}
			if err != nil {
				if off+nl+1 == len(data) {
					return recs, off, nil // a torn last line
				}
				return nil, 0, &configs.Error{File: path, Line: line,
					Msg: fmt.Sprintf("unreadable journal record: %v (the journal is append-only; move the directory aside to start over)", err)}
			}
			recs = append(recs, r)
		}
		off += nl + 1
	}
	return recs, off, nil
}

// Append writes one record and syncs it to disk.
func (j *Journal) Append(r Record) error {
	if r.Time.IsZero() {
		r.Time = time.Now().UTC()
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.torn {
		if err := j.repair(); err != nil {
			return fmt.Errorf("journal: cannot remove the record an earlier failed write cut short: %w", err)
		}
	}
	n, err := j.w.Write(append(data, '\n'))
	if err == nil && j.sync != nil {
		err = j.sync()
	}
	if err != nil {
		j.torn = true // part of the record may be on disk
		return fmt.Errorf("journal: %w", err)
	}
	j.end += int64(n)
	return nil
}

// repair cuts the journal back to its complete records, so the next
// record starts on a line of its own.
func (j *Journal) repair() error {
	if j.f == nil {
		return errors.New("no journal file")
	}
	if err := j.f.Truncate(j.end); err != nil {
		return err
	}
	if _, err := j.f.Seek(j.end, io.SeekStart); err != nil {
		return err
	}
	j.torn = false
	return nil
}

// Close closes the journal file.
func (j *Journal) Close() error {
	if j.f == nil {
		return nil
	}
	return j.f.Close()
}

// ReadJournal returns the records of dir's journal without opening it for
// writing (for cost estimates from an earlier sweep).
func ReadJournal(dir string) ([]Record, error) {
	path := filepath.Join(dir, JournalFile)
	data, err := inputfile.Read(path, inputfile.Journal)
	if err != nil {
		return nil, err
	}
	recs, _, err := parseJournal(path, data)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return recs, err
}

// Coverage is what a sweep directory's journal records of how its points
// were chosen and how far the sweep got.
type Coverage struct {
	// Adaptive is true for an adaptive discovery, one that ran only the
	// points its knee search asked for: its start's --adaptive setting
	// says so, or a probe or a skip is recorded.
	Adaptive bool
	// Skipped holds the point_skip record (Arm, Point, Conc, Reason) of
	// each point adaptive discovery did not run: its state after every
	// record is skipped. A point that ran and failed before the search
	// gave up on it stays failed (pointState.skip) and is not listed.
	Skipped []Record
	// Unfinished holds one record (Point, Arm, Conc, Status) of each
	// point of the sweep that is not finished: the sweep was killed or
	// interrupted while it ran (a point_start without its point_end, or
	// a point_end "interrupted": Status "interrupted"), or before it got
	// to the point (one its start lists with no record that it ran or
	// was skipped, or one redone after its result failed the check on
	// resume: Status ""), or one that failed for want of space on the
	// sweep directory's disk, which stopped the sweep (Record.DiskFull:
	// Status "interrupted"). Rerunning the sweep's command runs them. Arm
	// and Conc are the point's records', else its arm's in the sweep's
	// start (ArmPlan), else 0: a journal written before its start
	// recorded the arms does not say. A point that ran and failed is
	// finished (failed), whatever retries the sweep has left.
	//
	// In an adaptive discovery's journal, an arm whose last point start
	// lies in a segment of format 1 or later (JournalFormat: its binary
	// records the search's end) with no search_end since was stopped
	// between two steps of its search (a kill can leave every point run
	// once, as a probe): each of its points whose last run was a probe,
	// which the search may still run at the full length, is unfinished
	// too (Probe true, Status the probe's: ok or failed). Points it ran at
	// the full length cannot run again, nor a probe that failed the way a
	// full-length run fails too (its result file's error rate over the
	// limit, or no successful request: knee.Sample.FailedForGood), which
	// stays failed; an arm with no such probe left reads as finished. An
	// arm last run by a binary without a format (no search_end records),
	// or in a journal such a binary resumed since (it may have ended the
	// search unrecorded), is read without this rule.
	Unfinished []Record
	// Failed holds one record (Point, Arm, Conc, Error, Result, Probe;
	// Attempt: its attempts that ended) of each point whose last attempt
	// failed, in the journal's order: also one that failed before it
	// wrote a result (Result ""), and one with retries left that the
	// sweep, interrupted, has not run again.
	Failed []Record
	// Results lists per arm (Record.Arm, 1-based) the result files its
	// points' point_end records name, relative to the directory: what
	// ties an arm's number to the identity its results carry.
	Results map[int][]string
	// Arms holds the identity of each arm (Record.Arm) that the sweep's
	// start records (ArmPlan): the sweep's arms, so that a reader tells
	// an arm outside its selection from one whose points failed; empty
	// for a journal written before it did.
	Arms map[int]result.Identity
	// Planned holds the concurrencies of each arm (Record.Arm) that the
	// sweep's start plans (ArmPlan): a discovery of part of the official
	// conc-list (--conc-list) plans the others nowhere.
	Planned map[int][]int
}

// ReadCoverage reads dir's journal (ReadJournal) for its Coverage,
// replaying each point's records as a resumed sweep does.
func ReadCoverage(dir string) (Coverage, error) {
	recs, err := ReadJournal(dir)
	if err != nil {
		return Coverage{}, err
	}
	c := Coverage{Results: map[int][]string{}, Arms: map[int]result.Identity{}, Planned: map[int][]int{}}
	state := map[string]*pointState{}
	last := map[string]Record{}
	// where is each point's arm and concurrency (Arm, Conc).
	where := map[string]Record{}
	var order []string
	// format is the format of the segment read (segmentFormat), first
	// the journal's start's; recordsEnd says of an arm (Record.Arm) that
	// its search's end is recorded if it ended: its last point start and
	// every segment since are of format 1 or later.
	format, first := 0, -1
	searches, recordsEnd := searchState{}, map[int]bool{}
	point := func(id string) *pointState {
		st := state[id]
		if st == nil {
			st = &pointState{}
			state[id] = st
			order = append(order, id)
		}
		return st
	}
	for _, r := range recs {
		if r.Event == EventSweepStart {
			if first < 0 {
				first = r.Format
			}
			if format = segmentFormat(r, first); format < 1 {
				clear(recordsEnd) // an older binary may end any search unrecorded
			}
		}
		if r.Event == EventPointStart && r.Arm != 0 {
			recordsEnd[r.Arm] = format >= 1
		}
		switch {
		case r.Event == EventSweepStart && r.Identity != nil:
			c.Adaptive = c.Adaptive || r.Identity.has(AdaptiveSetting(true))
			for _, a := range r.Arms {
				c.Arms[a.Arm] = a.Identity
				for _, p := range a.Points {
					point(p.Point)
					where[p.Point] = Record{Arm: a.Arm, Conc: p.Conc}
					c.Planned[a.Arm] = append(c.Planned[a.Arm], p.Conc)
				}
			}
			for _, id := range r.Identity.Points {
				point(id)
			}
		case r.Event == EventPointSkip || r.Probe:
			c.Adaptive = true
		}
		searches.apply(r)
		if r.Point == "" {
			continue
		}
		point(r.Point).apply(r, 0)
		w := where[r.Point]
		if r.Arm != 0 {
			w.Arm = r.Arm
		}
		if r.Conc != 0 {
			w.Conc = r.Conc
		}
		where[r.Point] = w
		if r.Event == EventPointSkip {
			last[r.Point] = r
		}
		if r.Event == EventPointEnd && r.Result != "" && !slices.Contains(c.Results[r.Arm], r.Result) {
			c.Results[r.Arm] = append(c.Results[r.Arm], r.Result)
		}
	}
	for _, id := range order {
		switch st := state[id]; st.status {
		case StatusSkipped:
			c.Skipped = append(c.Skipped, last[id])
		case "", StatusInterrupted:
			w := where[id]
			c.Unfinished = append(c.Unfinished, Record{Point: id, Arm: w.Arm, Conc: w.Conc, Status: st.status})
		case StatusFailed:
			if st.diskFull { // the sweep stopped on it: a resume runs it
				w := where[id]
				c.Unfinished = append(c.Unfinished, Record{Point: id, Arm: w.Arm, Conc: w.Conc, Status: StatusInterrupted})
				continue
			}
			fallthrough
		case StatusOK:
			w := where[id]
			if st.status == StatusFailed {
				c.Failed = append(c.Failed, Record{Point: id, Arm: w.Arm, Conc: w.Conc, Status: st.status, Error: st.err,
					Result: st.result, Attempt: st.attempts, Probe: st.probe})
			}
			if st.probe && c.Adaptive && recordsEnd[w.Arm] && !searches[w.Arm] && !failedForGood(dir, id, w.Conc, st) {
				c.Unfinished = append(c.Unfinished, Record{Point: id, Arm: w.Arm, Conc: w.Conc, Status: st.status, Probe: true})
			}
		}
	}
	return c, nil
}

// segmentFormat is the format of the journal's records from the
// sweep_start r on, in a journal whose first sweep_start gives format
// first: r's, but a resume's start without one is of format 1 in a
// journal of format 1, whose binary gave only a new sweep's start its
// format (JournalFormat).
func segmentFormat(r Record, first int) int {
	if r.Format == 0 && r.Identity == nil && first == 1 {
		return 1
	}
	return r.Format
}

// failedForGood reports whether point id (at conc; st: its last run a
// probe) failed the way a full-length run fails too, which the search
// never runs again: the sample the search reads of it (runSample, from
// the result file its point_end names in dir, else the point's own) is a
// failure that is not a short window's (knee.Sample.FailedForGood). Not
// one that failed without a readable result: the search reads such a
// run as a failure a full-length run may pass.
func failedForGood(dir, id string, conc int, st *pointState) bool {
	if st.status != StatusFailed {
		return false
	}
	path := result.PointPath(dir, id)
	if st.result != "" {
		path = filepath.Join(dir, st.result)
	}
	smp, ok := runSample(path, conc, st.lastRun())
	return ok && smp.FailedForGood()
}

// searchState is what the journal says of each adaptive arm's search
// (by Record.Arm): true once it recorded its end (search_end), until
// the arm starts a point again.
type searchState map[int]bool

// apply is what record r says of its arm's search.
func (s searchState) apply(r Record) {
	switch {
	case r.Event == EventSearchEnd:
		s[r.Arm] = true
	case r.Event == EventPointStart && r.Arm != 0:
		s[r.Arm] = false
	}
}
