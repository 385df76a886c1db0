package recipes

import (
	"errors"
	"fmt"
	"strings"

	"sweep/configs/matrix"
	"sweep/internal/usage"
	"sweep/metrics/result"
)

// Problem is one reason a point cannot be planned.
type Problem struct {
	Index     int    // the row's position in the input
	ConfigKey string // "" when unknown
	Point     string // short description: tp/ep/dpa/conc
	Recipe    string // "" when no recipe was found
	Role      string // "recipe", "engine", "router", "client", "eval", "sidecar NAME"
	Err       error  // a *schema.Error for schema problems
}

func (p *Problem) Error() string {
	var b strings.Builder
	if p.Recipe != "" {
		fmt.Fprintf(&b, "recipe %s: ", p.Recipe)
	}
	if p.ConfigKey != "" {
		b.WriteString(p.ConfigKey + " ")
	}
	fmt.Fprintf(&b, "%s: %s: %v", p.Point, p.Role, p.Err)
	return b.String()
}

func (p *Problem) Unwrap() error { return p.Err }

// PlanError lists every problem of a plan (every offending point; one
// problem for all rows of a key that are not supported yet). A single
// problem prints as one line.
type PlanError struct {
	Problems []*Problem
}

func (e *PlanError) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0].Error()
	}
	pts := map[int]bool{}
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		pts[p.Index] = true
		msgs[i] = "  " + p.Error()
	}
	return fmt.Sprintf("%d problem(s) in %d point(s):\n%s", len(e.Problems), len(pts), strings.Join(msgs, "\n"))
}

// Unwrap exposes each problem to errors.Is and errors.As.
func (e *PlanError) Unwrap() []error {
	out := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		out[i] = p
	}
	return out
}

// ErrInvalidOptions wraps every PlanOptions problem (a bad port, duration
// or aiperf version), so callers can report it as a usage error.
var ErrInvalidOptions = errors.New("invalid plan options")

// ErrUnsupportedEngine is returned for a recipe engine this package has no
// shared behaviour for.
var ErrUnsupportedEngine = errors.New("unsupported engine")

func errUnsupportedEngine(r *Recipe) error {
	return fmt.Errorf("recipe %s: %w %q", r.Name, ErrUnsupportedEngine, r.Engine)
}

// describe is the short point description used in problems: the arm's
// label as knees and sweeps print it, then the concurrency ("tp8 ep8 dpa
// kv:dram c32").
func describe(r *matrix.Row) string {
	if r.Kind.MultiNode() {
		return fmt.Sprintf("%s (multi-node) conc%v", r.ExpName, r.Concs)
	}
	return result.RowIdentity(r).PointLabel(r.Conc)
}

// ErrNotSupported marks rows sweep cannot plan yet: other engines than
// SGLang and vLLM (ATOM, TRT-LLM, ...), multi-node and disaggregated
// serving (Dynamo, srt-slurm), and fixed-seq-len scenarios. Plan reports
// all such rows of one config key as a single problem.
var ErrNotSupported = errors.New("not supported yet")

// mergeNotSupported folds the ErrNotSupported problems of one key with the
// same message into one problem that counts the points.
func mergeNotSupported(probs []*Problem) []*Problem {
	type group struct {
		p *Problem
		n int
	}
	groups := map[string]*group{}
	var out []*Problem
	for _, p := range probs {
		if !errors.Is(p.Err, ErrNotSupported) || strings.HasPrefix(p.Point, "(") {
			out = append(out, p)
			continue
		}
		id := p.ConfigKey + "\x00" + p.Err.Error()
		if g, ok := groups[id]; ok {
			g.n++
			g.p.Point = fmt.Sprintf("(%d point(s))", g.n)
			continue
		}
		q := *p
		q.Point = "(1 point(s))"
		groups[id] = &group{p: &q, n: 1}
		out = append(out, &q)
	}
	return out
}

func notSupported(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrNotSupported, fmt.Sprintf(format, a...))
}

// Failure is a planning error as a command reports it: a rejected plan
// (*PlanError) behind "plan rejected: ", invalid options a usage error
// (exit 2), anything else as it is.
func Failure(err error) error {
	if _, ok := errors.AsType[*PlanError](err); ok {
		return fmt.Errorf("plan rejected: %w", err)
	}
	if errors.Is(err, ErrInvalidOptions) {
		return &usage.Error{Err: err}
	}
	return err
}
