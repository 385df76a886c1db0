package campaign

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
	// of its arm's job did (RunArm), or its arm's job never ran it
	// (FailJob: not submitted, ended before its first point); its
	// point_end, failed or interrupted, follows at once with why.
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
	Recovered bool `json:"recovered,omitempty"`
	// Reason says why: a server_start's and server_stop's, a recovered
	// point_end's; with adaptive discovery, a point_start's is the rule
	// of the search that asked for the point (Point.Why), a point_skip's
	// why the search does not need it and a search_end's the verdict it
	// ends on (SearchEnd).
	Reason string `json:"reason,omitempty"`
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
	// Grid is the arm's concurrencies in the config before the sweep's
	// --conc-list narrowed them (Arm.Grid): those not among Points are
	// not among the discovery's points (Plans.NotPlanned). Absent when
	// the sweep's binary did not record it.
	Grid []int `json:"grid,omitempty"`
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
		ap := ArmPlan{Arm: a.Index + 1, Identity: a.Identity, Grid: a.Grid}
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
