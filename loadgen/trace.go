package loadgen

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sweep/configs"
)

// Trace is one recorded agentic coding session in the public WEKA
// cc-traces format (semianalysisai/cc-traces-weka-*): a trace id, the KV
// block size its hash ids refer to, and the ordered request list.
type Trace struct {
	ID        string   `json:"id"`
	Models    []string `json:"models,omitempty"`
	BlockSize int      `json:"block_size"`
	// HashIDScope is "local": hash ids are namespaced per trace (aiperf's
	// model accepts nothing else and requires the field).
	HashIDScope string         `json:"hash_id_scope,omitempty"`
	Requests    []TraceRequest `json:"requests"`
}

// TraceRequest is one entry of a trace: a normal ("n") or streaming ("s")
// API call, or a "subagent" marker holding its own nested requests.
// Times are seconds from the start of the trace (or of the subagent).
type TraceRequest struct {
	T         float64 `json:"t"`
	Type      string  `json:"type"`
	Model     string  `json:"model,omitempty"`
	In        int     `json:"in,omitempty"`
	Out       int     `json:"out,omitempty"`
	HashIDs   []int64 `json:"hash_ids,omitempty"`
	Stop      string  `json:"stop,omitempty"`
	APITime   float64 `json:"api_time,omitempty"`
	ThinkTime float64 `json:"think_time,omitempty"`
	// AgentID, SubagentType, Status, Requests and SubModels are set on
	// "subagent" entries only (aiperf's model requires all five there).
	AgentID      string         `json:"agent_id,omitempty"`
	SubagentType string         `json:"subagent_type,omitempty"`
	Status       string         `json:"status,omitempty"`
	Requests     []TraceRequest `json:"requests,omitempty"`
	SubModels    []string       `json:"models,omitempty"`
}

// Turn is one request of a replayable conversation, derived from a
// TraceRequest.
type Turn struct {
	OuterIndex int     // index of the request in the trace's top-level list
	InnerIndex int     // index inside a subagent, -1 for the main agent
	In, Out    int     // recorded input and output tokens
	HashIDs    []int64 // KV block ids of the input
	// Delay is the idle gap to wait after the previous turn of the same
	// conversation completed, before sending this one.
	Delay float64
	// At is when the recorded request started, in seconds on the trace's
	// timeline (a subagent's relative times made absolute, as aiperf
	// 0.12.0 does): where a trajectory start falls.
	At float64
}

// Conversation is one sequential chain of turns: the main agent of a trace
// or one of its subagents. Children lists the subagents spawned before a
// given turn index of the parent (replayed before that turn is sent).
type Conversation struct {
	ID        string // trace id, or "<trace id>::sa:<agent id>"
	TraceID   string
	Kind      string // "weka_main" or "weka_subagent"
	Depth     int    // 0 for the main agent
	BlockSize int
	Turns     []Turn
	Children  map[int][]*Conversation // keyed by the parent turn they precede
}

// LoadTraces reads WEKA traces from path (a malformed one is a
// *configs.Error with its file and line): a JSONL file with one trace per
// line (the Hugging Face dataset layout), a single JSON trace file, or a
// directory of *.json / *.jsonl files (the kv-cache-tester layout).
func LoadTraces(path string) ([]Trace, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("trace source: %w", err)
	}
	if !st.IsDir() {
		return loadTraceFile(path)
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".jsonl")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("trace source %s: %w", path, err)
	}
	slices.Sort(files)
	var out []Trace
	for _, f := range files {
		ts, err := loadTraceFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	}
	if len(out) == 0 {
		return nil, &configs.Error{File: path, Msg: "no *.json or *.jsonl trace files found"}
	}
	return out, nil
}

func loadTraceFile(path string) ([]Trace, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("trace source: %w", err)
	}
	if strings.HasSuffix(path, ".json") {
		var t Trace
		if err := decodeTrace(data, &t); err != nil {
			return nil, &configs.Error{File: path, Msg: err.Error()}
		}
		if err := t.validate(); err != nil {
			return nil, &configs.Error{File: path, Msg: err.Error()}
		}
		return []Trace{t}, nil
	}
	return ParseTraces(path, bytes.NewReader(data))
}

// ParseTraces reads JSONL traces (one JSON object per line, blank lines
// ignored) from r; name is used in error positions.
func ParseTraces(name string, r io.Reader) ([]Trace, error) {
	var out []Trace
	err := eachJSONLine(r, func(line int, b []byte) error {
		var t Trace
		if err := decodeTrace(b, &t); err != nil {
			return &configs.Error{File: name, Line: line, Msg: err.Error()}
		}
		if err := t.validate(); err != nil {
			return &configs.Error{File: name, Line: line, Msg: err.Error()}
		}
		out = append(out, t)
		return nil
	})
	if _, ok := errors.AsType[*configs.Error](err); ok {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(out) == 0 {
		return nil, &configs.Error{File: name, Msg: "no traces"}
	}
	return out, nil
}

// eachJSONLine calls fn with each non-blank line of r (trimmed) and its
// 1-based number, and stops at fn's first error; a trace line may be
// up to 256 MB.
func eachJSONLine(r io.Reader, fn func(line int, b []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	line := 0
	for sc.Scan() {
		line++
		if b := bytes.TrimSpace(sc.Bytes()); len(b) > 0 {
			if err := fn(line, b); err != nil {
				return err
			}
		}
	}
	return sc.Err()
}

// decodeTrace decodes one trace. Unknown fields are tolerated (newer
// corpora add per-request fields such as input_types); the fields the
// replay needs are checked by validate.
func decodeTrace(b []byte, t *Trace) error {
	if err := json.Unmarshal(b, t); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("invalid JSON at byte %d: %w", se.Offset, err)
		}
		return fmt.Errorf("invalid trace: %w", err)
	}
	return nil
}

func (t *Trace) validate() error {
	if t.ID == "" {
		return errors.New(`trace has no "id"`)
	}
	if t.BlockSize <= 0 {
		return fmt.Errorf("trace %s: block_size %d: want a positive integer", t.ID, t.BlockSize)
	}
	if len(t.Requests) == 0 {
		return fmt.Errorf("trace %s: no requests", t.ID)
	}
	var check func(prefix string, rs []TraceRequest) error
	check = func(prefix string, rs []TraceRequest) error {
		for i, r := range rs {
			switch r.Type {
			case "n", "s", "":
				if r.In <= 0 {
					return fmt.Errorf("trace %s: %srequests[%d].in = %d: want > 0", t.ID, prefix, i, r.In)
				}
				if r.Out < 0 {
					return fmt.Errorf("trace %s: %srequests[%d].out = %d: want >= 0", t.ID, prefix, i, r.Out)
				}
			case "subagent":
				if r.AgentID == "" {
					return fmt.Errorf("trace %s: %srequests[%d]: subagent without agent_id", t.ID, prefix, i)
				}
				if err := check(fmt.Sprintf("%srequests[%d].", prefix, i), r.Requests); err != nil {
					return err
				}
			default:
				return fmt.Errorf("trace %s: %srequests[%d].type %q: want n, s or subagent", t.ID, prefix, i, r.Type)
			}
		}
		return nil
	}
	return check("", t.Requests)
}

// Conversation turns the trace into its replayable form: the main agent's
// turns in order, with each subagent attached before the next main turn
// (the parent waits for it, as aiperf's SPAWN_JOIN does). Subagents with
// no following main turn run after the last one. idleCap (seconds, 0 =
// none) caps every recorded idle gap.
func (t *Trace) Conversation(idleCap float64) *Conversation {
	root := &Conversation{ID: t.ID, TraceID: t.ID, Kind: "weka_main", BlockSize: t.BlockSize, Children: map[int][]*Conversation{}}
	var pending []*Conversation
	prevEnd := -1.0
	for i, r := range t.Requests {
		if r.Type == "subagent" {
			sub := &Conversation{
				ID: t.ID + "::sa:" + r.AgentID, TraceID: t.ID, Kind: "weka_subagent", Depth: 1,
				BlockSize: t.BlockSize,
			}
			subPrev := -1.0
			for j, sr := range r.Requests {
				if sr.Type == "subagent" { // nested fan-out: flattened into this chain
					continue
				}
				turn := newTurn(i, j, sr, subPrev, idleCap)
				if sr.T+1e-6 < r.T { // relative to the spawn, not absolute
					turn.At = r.T + sr.T
				}
				sub.Turns = append(sub.Turns, turn)
				subPrev = endOf(sr)
			}
			if len(sub.Turns) > 0 {
				pending = append(pending, sub)
			}
			continue
		}
		if len(pending) > 0 {
			root.Children[len(root.Turns)] = pending
			pending = nil
		}
		root.Turns = append(root.Turns, newTurn(i, -1, r, prevEnd, idleCap))
		prevEnd = endOf(r)
	}
	if len(pending) > 0 {
		root.Children[len(root.Turns)] = pending
	}
	return root
}

func newTurn(outer, inner int, r TraceRequest, prevEnd, idleCap float64) Turn {
	var delay float64
	switch {
	case r.ThinkTime > 0:
		delay = r.ThinkTime
	case prevEnd >= 0:
		delay = max(0, r.T-prevEnd)
	}
	if idleCap > 0 {
		delay = min(delay, idleCap)
	}
	return Turn{OuterIndex: outer, InnerIndex: inner, In: r.In, Out: r.Out, HashIDs: r.HashIDs, Delay: delay, At: r.T}
}

// endOf is when the recorded request's response ended, or -1 when the
// trace does not record its api_time (then no idle gap can be derived:
// start-to-start deltas would count the recorded server time twice).
func endOf(r TraceRequest) float64 {
	if r.APITime <= 0 {
		return -1
	}
	return r.T + r.APITime
}
