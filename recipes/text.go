package recipes

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"sweep/configs"
)

// WriteText writes points for a person reviewing a plan, as shell text a
// person can paste: per point a header (key, tp/ep/dpa/conc, offload) as
// comments, then each command as its environment (KEY=value prefixes, or
// env(1) arguments when the command also unsets or copies variables) and
// its argv, one flag per line with " \" continuations, quoted where a
// shell would split or expand a word. Every command shows its whole
// environment, so each one runs on its own.
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
	fmt.Fprintf(b, "# === point %d/%d: %s  tp=%d ep=%d dpa=%t conc=%d kv=%s  [%s]\n",
		i+1, n, key, r.TP, r.EP, r.DPAttn, r.Conc, strings.TrimPrefix(kvName(r), "-"), kind)
	fmt.Fprintf(b, "# recipe:   %s (InferenceX benchmarks/single_node/agentic/%s.sh)\n", p.Recipe, p.Recipe)
	fmt.Fprintf(b, "# result:   %s/%s.json\n", strings.TrimSuffix(p.ResultDir, "/"), p.ResultFilename)
	if p.GoldenAL != nil {
		fmt.Fprintf(b, "# golden AL: %s\n", strconv.FormatFloat(*p.GoldenAL, 'f', -1, 64))
	}
	if len(p.MetricsURLs) > 0 {
		fmt.Fprintf(b, "# metrics:  %s", strings.Join(p.MetricsURLs, " "))
		if p.RequiredMetricPrefix != "" {
			fmt.Fprintf(b, " (required prefix %s)", p.RequiredMetricPrefix)
		}
		b.WriteString("\n")
	}
	for _, e := range p.Escapes {
		fmt.Fprintf(b, "# unchecked: %s (%s)\n", strings.Join(quoteAll(append([]string{e.Flag}, e.Values...)), " "), e.Reason)
	}
	for _, s := range p.Sidecars {
		ready := "ready: " + s.HealthURL
		if s.HealthURL == "" {
			ready = "no readiness endpoint"
		}
		for _, f := range s.Files {
			// A heredoc, so the pasted text writes the file too.
			fmt.Fprintf(b, "# file for sidecar %s:\n  cat > %s <<'EOF'\n%sEOF\n", s.Name, strings.Join(quoteAll([]string{f.Path}), ""), f.Content)
		}
		writeCommand(b, "sidecar "+s.Name+" ("+ready+")", s.Command)
	}
	writeCommand(b, "engine (ready: "+p.HealthURL+", command file "+p.CommandFile+")", p.Engine)
	if p.Router != nil {
		writeCommand(b, "router (ready: "+p.RouterHealthURL+")", *p.Router)
	}
	if p.Client != nil {
		writeCommand(b, "client", *p.Client)
	}
	if p.Eval != nil {
		writeCommand(b, "eval", *p.Eval)
	}
	for i, c := range p.Launch {
		title := fmt.Sprintf("launch %d/%d on the runner host: %s", i+1, len(p.Launch), c.Role)
		if c.MayFail {
			title += " (may fail)"
		}
		if len(c.StdoutTo) > 0 {
			title += ", output into: " + strings.Join(quoteAll(c.StdoutTo), " ")
		}
		writeCommand(b, title, Command{Argv: c.Argv, Env: c.Env})
	}
	for _, n := range p.LaunchNotes {
		fmt.Fprintf(b, "# launch note: %s\n", n)
	}
}

// writeCommand prints a comment line naming the command, then the command
// as shell text: its environment first, one variable per line, then the
// argv with the program on one line and one flag with its values per line,
// every line but the last ending in " \".
func writeCommand(b *strings.Builder, title string, c Command) {
	fmt.Fprintf(b, "# %s:\n", title)
	var lines []string
	viaEnv := len(c.Unset) > 0 || len(c.EnvFrom) > 0
	if viaEnv {
		// env(1) takes the assignments as arguments, so a copy that only
		// happens when its source is set can be a ${SRC+"DST=$SRC"} word.
		head := "env"
		for _, u := range c.Unset {
			head += " -u " + strings.Join(quoteAll([]string{u}), "")
		}
		lines = append(lines, head)
	}
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		lines = append(lines, k+"="+strings.Join(quoteAll([]string{c.Env[k]}), ""))
	}
	for _, k := range slices.Sorted(maps.Keys(c.EnvFrom)) {
		src := c.EnvFrom[k]
		lines = append(lines, fmt.Sprintf(`${%s+"%s=$%s"}`, src, k, src))
	}
	argv := argvLines(c.Argv)
	if len(argv) > 0 {
		lines = append(lines, argv[0])
		for _, l := range argv[1:] {
			lines = append(lines, "  "+strings.TrimPrefix(l, "  "))
		}
	}
	for i, l := range lines {
		indent := "  "
		if viaEnv && i > 0 {
			indent = "    "
		}
		if strings.HasPrefix(l, "  ") {
			indent += "  "
			l = l[2:]
		}
		b.WriteString(indent + l)
		if i < len(lines)-1 {
			b.WriteString(" \\")
		}
		b.WriteString("\n")
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
		if t == "" || strings.ContainsAny(t, " \t\n\"'{}[]$`\\*?<>|&;()#!~") && !strings.HasPrefix(t, "${") {
			out[i] = "'" + strings.ReplaceAll(t, "'", `'\''`) + "'"
			continue
		}
		out[i] = t
	}
	return out
}

// WriteProfiles says which runner profile (launcher behaviour: container,
// Slurm allocation, site environment) applies to the planned points, one
// line per runner (RunnerName of each point's row and runners).
func WriteProfiles(w io.Writer, points []Point, runners *configs.Runners) error {
	seen := map[string]bool{}
	var lines []string
	for i := range points {
		runner := RunnerName(&points[i].Row, runners)
		if seen[runner] {
			continue
		}
		seen[runner] = true
		prof, err := ProfileFor(runner)
		if err != nil {
			lines = append(lines, fmt.Sprintf("#   %s: no runner profile (%v)", runner, err))
			continue
		}
		lines = append(lines, fmt.Sprintf("#   %s -> profile %s", runner, prof))
	}
	_, err := fmt.Fprintf(w, "\n# runner profiles applied:\n%s\n", strings.Join(lines, "\n"))
	return err
}
