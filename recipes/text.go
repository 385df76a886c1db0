package recipes

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// WriteText writes points for a person reviewing a plan: per point a header
// (key, tp/ep/dpa/conc, offload), then each command with its environment
// and its argv one flag per line. The router's, client's and eval's
// environment is shown as what they add to or change from the engine's.
func WriteText(w io.Writer, points []Point) error {
	var b strings.Builder
	for i, p := range points {
		if i > 0 {
			b.WriteString("\n")
		}
		writePoint(&b, i, len(points), p)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writePoint(b *strings.Builder, i, n int, p Point) {
	r := &p.Row
	key := r.ConfigKey
	if key == "" {
		key = r.ExpName
	}
	kind := "benchmark"
	if p.Eval != nil {
		kind = "eval"
	}
	if p.Fast {
		kind += " (agentx-fast)"
	}
	fmt.Fprintf(b, "=== point %d/%d: %s  tp=%d ep=%d dpa=%t conc=%d kv=%s  [%s]\n",
		i+1, n, key, r.TP, r.EP, r.DPAttn, r.Conc, strings.TrimPrefix(kvName(r), "-"), kind)
	fmt.Fprintf(b, "recipe:   %s (InferenceX benchmarks/single_node/agentic/%s.sh)\n", p.Recipe, p.Recipe)
	fmt.Fprintf(b, "result:   %s/%s.json\n", strings.TrimSuffix(p.ResultDir, "/"), p.ResultFilename)
	if p.GoldenAL != nil {
		fmt.Fprintf(b, "golden AL: %s\n", strconv.FormatFloat(*p.GoldenAL, 'f', -1, 64))
	}
	if len(p.MetricsURLs) > 0 {
		fmt.Fprintf(b, "metrics:  %s", strings.Join(p.MetricsURLs, " "))
		if p.RequiredMetricPrefix != "" {
			fmt.Fprintf(b, " (required prefix %s)", p.RequiredMetricPrefix)
		}
		b.WriteString("\n")
	}
	for _, e := range p.Escapes {
		fmt.Fprintf(b, "unchecked: %s (%s)\n", strings.Join(quoteAll(append([]string{e.Flag}, e.Values...)), " "), e.Reason)
	}
	for _, s := range p.Sidecars {
		writeCommand(b, "sidecar "+s.Name+" (ready: "+s.HealthURL+")", s.Command, nil)
	}
	writeCommand(b, "engine (ready: "+p.HealthURL+", command file "+p.CommandFile+")", p.Engine, nil)
	if p.Router != nil {
		writeCommand(b, "router (ready: "+p.RouterHealthURL+")", *p.Router, p.Engine.Env)
	}
	if p.Client != nil {
		writeCommand(b, "client", *p.Client, p.Engine.Env)
	}
	if p.Eval != nil {
		writeCommand(b, "eval", *p.Eval, p.Engine.Env)
	}
}

// writeCommand prints env (all of it, or what differs from base) and the
// argv with the program on the first line and one flag per line after it.
func writeCommand(b *strings.Builder, title string, c Command, base map[string]string) {
	fmt.Fprintf(b, "%s:\n", title)
	envTitle := "  env:\n"
	if base != nil {
		envTitle = "  env (beyond the engine's):\n"
	}
	printed := false
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		if bv, ok := base[k]; ok && bv == c.Env[k] {
			continue
		}
		if !printed {
			b.WriteString(envTitle)
			printed = true
		}
		fmt.Fprintf(b, "    %s=%s\n", k, c.Env[k])
	}
	if base == nil {
		for _, k := range slices.Sorted(maps.Keys(c.EnvFrom)) {
			fmt.Fprintf(b, "    %s=$%s (when set)\n", k, c.EnvFrom[k])
		}
		if len(c.Unset) > 0 {
			fmt.Fprintf(b, "  unset: %s\n", strings.Join(c.Unset, " "))
		}
	}
	b.WriteString("  argv:\n")
	for _, line := range argvLines(c.Argv) {
		fmt.Fprintf(b, "    %s\n", line)
	}
}

// argvLines groups argv as a reviewer reads it: the program and its
// subcommand or positional first, then one flag with its values per line.
func argvLines(argv []string) []string {
	first := 0
	for first < len(argv) && !strings.HasPrefix(argv[first], "--") {
		first++
	}
	lines := []string{strings.Join(quoteAll(argv[:first]), " ")}
	for i := first; i < len(argv); {
		j := i + 1
		for j < len(argv) && !strings.HasPrefix(argv[j], "--") {
			j++
		}
		lines = append(lines, "  "+strings.Join(quoteAll(argv[i:j]), " "))
		i = j
	}
	return lines
}

// quoteAll single-quotes tokens a shell would split or expand, so a line can
// be pasted into a terminal.
func quoteAll(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		if t == "" || strings.ContainsAny(t, " \t\n\"'{}[]$`\\*?<>|&;()#!") && !strings.HasPrefix(t, "${") {
			out[i] = "'" + strings.ReplaceAll(t, "'", `'\''`) + "'"
			continue
		}
		out[i] = t
	}
	return out
}
