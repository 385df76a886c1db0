package recipes

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"sweep/configs"
	"sweep/configs/matrix"
)

// Catalog is a set of recipes addressed by script name. Build one with
// NewCatalog or take the shipped one from models.Builtin (sweep/recipes/models);
// a Catalog is not changed
// after construction and is safe for concurrent use.
type Catalog struct {
	recipes []*Recipe // sorted by Name
}

// NewCatalog returns a catalog of the given recipes; names must be unique.
func NewCatalog(rs ...*Recipe) (*Catalog, error) {
	c := &Catalog{}
	var errs []error
	for _, r := range rs {
		if r.Name == "" {
			errs = append(errs, errors.New("recipe without a name"))
			continue
		}
		if _, dup := c.Recipe(r.Name); dup {
			errs = append(errs, fmt.Errorf("recipe %s defined twice", r.Name))
			continue
		}
		c.recipes = append(c.recipes, r)
		slices.SortFunc(c.recipes, func(a, b *Recipe) int { return strings.Compare(a.Name, b.Name) })
	}
	return c, errors.Join(errs...)
}

// Recipes returns the recipes, sorted by name.
func (c *Catalog) Recipes() []*Recipe { return slices.Clone(c.recipes) }

// Recipe returns the recipe called name.
func (c *Catalog) Recipe(name string) (*Recipe, bool) {
	i := slices.IndexFunc(c.recipes, func(r *Recipe) bool { return r.Name == name })
	if i < 0 {
		return nil, false
	}
	return c.recipes[i], true
}

// Launcher is one of InferenceX's runners/launch_<name>.sh scripts: the
// runner-name prefix (${RUNNER_NAME%%_*}) picks it, and its naming rule
// picks the recipe script.
type Launcher struct {
	Name string // runner-name prefix, e.g. "mi325x-amds"
	GPU  string // the <gpu> part of the script name
	// FrameworkFirst tries <prefix>_<precision>_<gpu>_<framework>[_mtp]
	// first and falls back to the name without the framework (MI355X, B300,
	// H200, B200). Otherwise the framework is never in the name (MI325X,
	// MI300X, H100).
	FrameworkFirst bool
	// FallbackSuffix is the engine suffix kept in the fallback name
	// (MI355X keeps "_atom" for ATOM; B300, H200 and B200 keep "_trt" for
	// TRT-LLM).
	FallbackSuffix map[configs.Engine]string
}

// Launchers are the single-node launchers of the runners sweep plans for.
var launchers = []Launcher{
	{Name: "mi325x-amds", GPU: "mi325x"},
	{Name: "mi300x-amds", GPU: "mi300x"},
	{Name: "mi355x-amds", GPU: "mi355x", FrameworkFirst: true, FallbackSuffix: map[configs.Engine]string{"atom": "_atom"}},
	{Name: "b300-nv", GPU: "b300", FrameworkFirst: true, FallbackSuffix: map[configs.Engine]string{"trt": "_trt"}},
	{Name: "h200-dgxc-slurm", GPU: "h200", FrameworkFirst: true, FallbackSuffix: map[configs.Engine]string{"trt": "_trt"}},
	{Name: "b200-dgxc", GPU: "b200", FrameworkFirst: true, FallbackSuffix: map[configs.Engine]string{"trt": "_trt"}},
	{Name: "h100-dgxc-slurm", GPU: "h100"},
	{Name: "mi325x-tw", GPU: "mi325x"},
}

// Launchers returns the known launchers.
func Launchers() []Launcher { return slices.Clone(launchers) }

// ScriptNames returns the recipe script names the launcher tries for a row,
// in order.
func (l Launcher) ScriptNames(r *matrix.Row) []string {
	base := r.ModelPrefix + "_" + r.Precision + "_" + l.GPU
	mtp := ""
	if r.SpecDecoding == "mtp" {
		mtp = "_mtp"
	}
	if !l.FrameworkFirst {
		return []string{base + mtp}
	}
	return slices.Compact([]string{base + "_" + string(r.Framework) + mtp, base + l.FallbackSuffix[r.Framework] + mtp})
}

// RunnerName returns the runner a row runs on: the row's runner when it is
// already a runner name, else the first runner of its label in runners (or
// the label itself when runners does not know it).
func RunnerName(r *matrix.Row, runners *configs.Runners) string {
	if runners != nil {
		if names, ok := runners.Runner(r.Runner); ok && len(names) > 0 {
			return names[0]
		}
	}
	return r.Runner
}

// CheckRunner checks that name (--runner-name) can run row: a runner of
// the row's runner label in runners, or a runner of another launcher of the
// same GPU (the docker twin launch_mi325x-tw.sh runs an mi325x key's
// recipe as launch_mi325x-amds.sh does). Any other runner would route the
// key to another GPU's recipe, image and environment, so it is an
// ErrInvalidOptions naming the label's runners. A runner of a launcher
// that runners lists runners of must be one of them (mi325x-amds_99 is
// no node of launch_mi325x-amds.sh); a launcher it lists none of (the
// docker twin) takes any. A label runners does not list is not checked.
func CheckRunner(row *matrix.Row, runners *configs.Runners, name string) error {
	if runners == nil || name == "" {
		return nil
	}
	names, ok := runners.Runner(row.Runner)
	if !ok || len(names) == 0 || slices.Contains(names, name) {
		return nil
	}
	own, ownErr := LauncherFor(names[0])
	if l, err := LauncherFor(name); err == nil && ownErr == nil && l.GPU == own.GPU {
		known := launcherRunners(runners, l.Name)
		if len(known) == 0 || slices.Contains(known, name) {
			return nil
		}
		return fmt.Errorf("%w: --runner-name %s is not a runner of launch_%s.sh in %s (its runners: %s); give one of them, e.g. --runner-name %s, or drop --runner-name",
			ErrInvalidOptions, name, l.Name, cmp.Or(runners.File, "runners.yaml"), strings.Join(known, ", "), names[0])
	}
	return fmt.Errorf("%w: --runner-name %s is not a runner of %s (runner label %s: %s); give one of them, e.g. --runner-name %s, or drop --runner-name",
		ErrInvalidOptions, name, row.ConfigKey, row.Runner, strings.Join(names, ", "), names[0])
}

// launcherRunners lists, sorted, the runner names of every label of
// runners whose launcher is the one called launcher.
func launcherRunners(runners *configs.Runners, launcher string) []string {
	var known []string
	for _, names := range runners.Labels {
		for _, n := range names {
			if l, err := LauncherFor(n); err == nil && l.Name == launcher && !slices.Contains(known, n) {
				known = append(known, n)
			}
		}
	}
	slices.Sort(known)
	return known
}

// LauncherFor returns the launcher of a runner name (mi325x-amds_03 →
// mi325x-amds).
func LauncherFor(runnerName string) (Launcher, error) {
	prefix, _, _ := strings.Cut(strings.TrimPrefix(runnerName, "cluster:"), "_")
	i := slices.IndexFunc(launchers, func(l Launcher) bool { return l.Name == prefix })
	if i < 0 {
		names := make([]string, len(launchers))
		for j, l := range launchers {
			names[j] = l.Name
		}
		return Launcher{}, fmt.Errorf("runner %s: no launcher launch_%s.sh (known: %s)", runnerName, prefix, strings.Join(names, ", "))
	}
	return launchers[i], nil
}

// retiredScripts are recipe scripts InferenceX removed while a master
// config key still routes to them (the key cannot run there either).
var retiredScripts = map[string]string{
	"qwen3.5_fp8_h100": "InferenceX removed in #2561 (AgentX support synced with production results at 843c6254f); only the _mtp variant exists",
}

// Lookup routes a row to its recipe as InferenceX's launchers do. A row
// routed to a script InferenceX removed is ErrNotSupported.
func (c *Catalog) Lookup(r *matrix.Row, runners *configs.Runners) (*Recipe, error) {
	runner := RunnerName(r, runners)
	l, err := LauncherFor(runner)
	if err != nil {
		return nil, err
	}
	names := l.ScriptNames(r)
	for _, n := range names {
		if rec, ok := c.Recipe(n); ok {
			return rec, nil
		}
	}
	for _, n := range names {
		if why, ok := retiredScripts[n]; ok {
			return nil, fmt.Errorf("%w: launch_%s.sh would run benchmarks/single_node/agentic/%s.sh, which %s", ErrNotSupported, l.Name, n, why)
		}
	}
	tried := make([]string, len(names))
	for i, n := range names {
		tried[i] = "benchmarks/single_node/agentic/" + n + ".sh"
	}
	return nil, fmt.Errorf("no recipe: launch_%s.sh would run %s, and sweep has no recipe of that name", l.Name, strings.Join(tried, " or "))
}
