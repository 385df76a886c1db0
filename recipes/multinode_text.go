package recipes

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// WriteMultiNodeText prints multi-node points for a reviewer: per point the
// launcher, the node and GPU totals, each role (workers, nodes, GPUs per
// node, layout, placement) with its command or what renders it, the
// submission command and the files it submits, and the result name.
func WriteMultiNodeText(w io.Writer, points []MultiNodePoint) error {
	var b strings.Builder
	for i, p := range points {
		if i > 0 {
			b.WriteString("\n")
		}
		r := &p.Row
		fmt.Fprintf(&b, "# [%d/%d] %s %s conc %v (%s", i+1, len(points), r.ConfigKey, r.ExpName, r.Concs, r.Kind)
		if p.Disagg {
			fmt.Fprintf(&b, ", disaggregated, KV transfer %s", p.KVTransfer)
		} else {
			b.WriteString(", aggregated")
		}
		fmt.Fprintf(&b, ")\n# launcher launch_%s.sh submits with %s: %d node(s), %d worker GPU(s)\n", p.Launcher, p.Submitter, p.Nodes, p.GPUs)
		if p.SrtSlurm != nil {
			fmt.Fprintf(&b, "# srt-slurm %s at %s, recipe %s", p.SrtSlurm.Repo, p.SrtSlurm.Ref, p.Recipe)
			if p.SrtSlurm.Overlay != "" {
				fmt.Fprintf(&b, " (overlay %s)", p.SrtSlurm.Overlay)
			}
			b.WriteString("\n")
		}
		for _, role := range p.Roles {
			fmt.Fprintf(&b, "# %s: %s\n", role.Role, roleSummary(role))
			if role.Command != nil {
				writeCommand(&b, string(role.Role)+" command", *role.Command)
			}
		}
		if p.Submit != nil {
			writeCommand(&b, "submit", Command{Argv: p.Submit.Argv, Env: p.Submit.Env})
		}
		for _, f := range slices.Sorted(maps.Keys(p.Files)) {
			fmt.Fprintf(&b, "# submits %s: %s\n", f, p.Files[f])
		}
		for _, e := range p.Escapes {
			fmt.Fprintf(&b, "# unchecked %s: %s\n", e.Flag, e.Reason)
		}
		fmt.Fprintf(&b, "# result: %s_conc<N>.json\n", p.ResultFilename)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func roleSummary(r RolePlan) string {
	var parts []string
	if r.Nodes > 0 {
		parts = append(parts, fmt.Sprintf("%d worker(s) x %d node(s), %d GPU(s)/node", r.Workers, r.NodesPerWorker, r.GPUsPerNode))
	}
	if p := r.Parallelism; p != nil {
		s := fmt.Sprintf("tp%d ep%d", p.TP, p.EP)
		if p.PP > 1 {
			s += fmt.Sprintf(" pp%d", p.PP)
		}
		if p.DPAttn {
			s += " dpa"
		}
		parts = append(parts, s)
	}
	if r.Placement != "" {
		parts = append(parts, "on "+r.Placement)
	}
	if r.RenderedBy != "" {
		parts = append(parts, "rendered by "+r.RenderedBy)
	}
	return strings.Join(parts, "; ")
}
