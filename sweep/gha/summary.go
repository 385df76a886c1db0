package gha

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sweep/internal/plural"
)

// maxResultFile bounds one result JSON read by the summary.
const maxResultFile = 16 << 20

// pointResult is what the summary reads of an aggregate result JSON.
type pointResult struct {
	File           string
	Conc           int      `json:"conc"`
	HW             string   `json:"hw"`
	Framework      string   `json:"framework"`
	Precision      string   `json:"precision"`
	TP             int      `json:"tp"`
	EP             int      `json:"ep"`
	DPAttention    string   `json:"dp_attention"`
	Valid          *bool    `json:"valid"`
	InvalidReasons []string `json:"invalid_reasons"`
	Simulated      bool     `json:"simulated"`
	// The power lane's keys (nil: the lane did not run).
	PowerSchema          *int     `json:"power_metric_schema_version"`
	PowerValid           *int     `json:"power_valid"`
	JoulesPerOutputToken *float64 `json:"joules_per_output_token"`
	RequestMetrics       *struct {
		Throughput struct {
			PerGPU *struct {
				Total  *float64 `json:"total_tput_tps"`
				Output *float64 `json:"output_tput_tps"`
			} `json:"per_gpu"`
		} `json:"throughput"`
		Latency struct {
			TTFT   struct{ P50 *float64 } `json:"ttft"`
			Intvty struct{ P50 *float64 } `json:"intvty"`
		} `json:"latency"`
	} `json:"request_metrics"`
}

// WriteSummary writes the Markdown summary of a sweep for
// $GITHUB_STEP_SUMMARY: what the labels asked for, the legs skipped, and one
// row per result JSON found under dir (files without conc and
// request_metrics are not results and are left out).
func WriteSummary(w io.Writer, fan *FanoutJSON, dir string) error {
	var rs []pointResult
	var bad []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".json") || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > maxResultFile {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", path, err))
			return nil
		}
		var r pointResult
		if json.Unmarshal(data, &r) != nil || r.RequestMetrics == nil || r.Conc == 0 {
			return nil
		}
		r.File = filepath.Base(path)
		rs = append(rs, r)
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].File[:strings.LastIndex(rs[i].File, "_conc")+1] != rs[j].File[:strings.LastIndex(rs[j].File, "_conc")+1] {
			return rs[i].File < rs[j].File
		}
		return rs[i].Conc < rs[j].Conc
	})
	b := &strings.Builder{}
	b.WriteString("## sweep\n\n")
	if fan != nil {
		if !fan.Sweep {
			b.WriteString("No sweep label on this pull request: nothing ran.\n")
			_, err := io.WriteString(w, b.String())
			return err
		}
		fmt.Fprintf(b, "Label `%s`", fan.Primary)
		if fan.AgentxFast {
			b.WriteString(" with `agentx-fast`")
		}
		total := 0
		for _, n := range fan.Counts {
			total += n
		}
		fmt.Fprintf(b, ": %s.\n\n", plural.Count(total, "job", "jobs"))
		for _, s := range fan.Skipped {
			fmt.Fprintf(b, "- skipped %s of %s on `%s`: %s\n", plural.Count(s.Jobs, "job", "jobs"), s.Bucket, s.Runner, s.Reason)
		}
		if len(fan.Skipped) > 0 {
			b.WriteString("\n")
		}
	}
	if len(rs) == 0 {
		b.WriteString("No result files were collected.\n")
	} else {
		b.WriteString("| result | conc | tok/s/GPU | output tok/s/GPU | TTFT p50 (s) | interactivity p50 (tok/s) | power_valid | J/output tok | valid |\n")
		b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---|\n")
		for _, r := range rs {
			m := r.RequestMetrics
			var tot, outp *float64
			if m.Throughput.PerGPU != nil {
				tot, outp = m.Throughput.PerGPU.Total, m.Throughput.PerGPU.Output
			}
			valid := "yes"
			switch {
			case r.Valid != nil && !*r.Valid:
				valid = "no: " + strings.Join(r.InvalidReasons, "; ")
			case r.Valid == nil:
				valid = "(not stated)"
			}
			if r.Simulated {
				valid += " (simulated)"
			}
			powerValid, jpt := "–", (*float64)(nil)
			if r.PowerValid != nil {
				powerValid = fmt.Sprint(*r.PowerValid)
				if *r.PowerValid == 1 && r.PowerSchema != nil && *r.PowerSchema == 2 {
					jpt = r.JoulesPerOutputToken
				}
			}
			fmt.Fprintf(b, "| `%s` | %d | %s | %s | %s | %s | %s | %s | %s |\n", strings.TrimSuffix(r.File, ".json"), r.Conc,
				num(tot, 1), num(outp, 1), num(m.Latency.TTFT.P50, 3), num(m.Latency.Intvty.P50, 1), powerValid, num(jpt, 3), valid)
		}
	}
	for _, e := range bad {
		fmt.Fprintf(b, "\n- unreadable: %s", e)
	}
	_, err = io.WriteString(w, b.String())
	return err
}

func num(v *float64, prec int) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.*f", prec, *v)
}
