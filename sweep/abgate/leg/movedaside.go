package leg

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// movedAside lists what resumed runs of p's leg moved aside in dir and
// kept: the earlier reports (keepEarlierReport: report.md.<n>,
// report.json.<n>) and each arm's earlier servers' files
// (keepEarlierServer: <arm>/server.<n>), relative to dir, each kind in
// the order of n. Nothing is ever deleted: an earlier report may be a
// completed verdict and an earlier server's log the only account of why
// it died; the leg's report lists them so the engineer removes them by
// hand once they are not needed. None: nil.
func movedAside(dir string, p *Plan) []string {
	bases := []string{filepath.Join(dir, ReportTable), filepath.Join(dir, ReportJSON)}
	for i := range p.Arms {
		bases = append(bases, ServerDir(dir, p.Arms[i].Label))
	}
	var out []string
	for _, base := range bases {
		for _, n := range suffixes(base) {
			out = append(out, relTo(dir, fmt.Sprintf("%s.%d", base, n)))
		}
	}
	return out
}

// suffixes are the n, ascending, for which base.<n> exists (freeSuffix's
// numbering: from 1).
func suffixes(base string) []int {
	entries, err := os.ReadDir(filepath.Dir(base))
	if err != nil {
		return nil
	}
	var ns []int
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), filepath.Base(base)+".")
		if n, err := strconv.Atoi(rest); ok && err == nil && n > 0 && strconv.Itoa(n) == rest {
			ns = append(ns, n)
		}
	}
	slices.Sort(ns)
	return ns
}
