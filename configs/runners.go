package configs

import (
	"fmt"
	"strings"

	"sweep/internal/inputfile"
)

var (
	runnersKeys  = []string{"labels", "hardware"}
	hardwareKeys = []string{"available-cpu-dram-mib", "gpus-per-node"}
)

// LoadRunners reads and checks configs/runners.yaml: a labels mapping of
// label -> non-empty list of runner names, and an optional hardware mapping
// of label -> {available-cpu-dram-mib, gpus-per-node}.
func LoadRunners(path string) (*Runners, error) {
	data, err := inputfile.Read(path, inputfile.ConfigYAML)
	if err != nil {
		return nil, joinErrors([]*Error{{File: path, Line: 1, Col: 1, Msg: fmt.Sprintf("cannot read runner config: %v", err)}})
	}
	return ParseRunners(Source{Name: path, Data: data})
}

// ParseRunners is LoadRunners on an in-memory file.
func ParseRunners(src Source) (*Runners, error) {
	d := &decoder{file: src.Name}
	r := d.runners(src.Data)
	if len(d.errs) > 0 {
		return nil, joinErrors(d.errs)
	}
	return r, nil
}

// Runner returns the runner names of label.
func (r *Runners) Runner(label string) ([]string, bool) {
	names, ok := r.Labels[label]
	return names, ok
}

func (d *decoder) runners(data []byte) *Runners {
	r := &Runners{
		File:        d.file,
		Labels:      map[string][]string{},
		Hardware:    map[string]Hardware{},
		LabelPos:    map[string]Pos{},
		HardwarePos: map[string]Pos{},
	}
	root := d.parseDocument(data)
	if root == nil {
		if len(d.errs) == 0 {
			d.errAt(nil, "", "runner config is empty; it needs a labels mapping")
		}
		return r
	}
	top, ok := d.mapping(root, "", runnersKeys, nil)
	if !ok {
		return r
	}
	d.require(top, root, "", "labels")
	if n := top.get("labels"); n != nil {
		if f, ok := d.mapping(n, "labels", nil, nil); ok {
			for _, label := range f.order {
				p := joinPath("labels", label)
				v := f.get(label)
				items, ok := d.sequence(v, p)
				if !ok {
					continue
				}
				if len(items) == 0 {
					d.errAt(resolve(v), p, "runner label must list at least one runner name")
					continue
				}
				names, ok := d.strList(v, p)
				if !ok {
					continue
				}
				r.Labels[label] = names
				r.LabelOrder = append(r.LabelOrder, label)
				r.LabelPos[label] = d.pos(f.keyNode(label))
			}
		}
	}
	if n := top.get("hardware"); n != nil {
		if f, ok := d.mapping(n, "hardware", nil, nil); ok {
			for _, label := range f.order {
				p := joinPath("hardware", label)
				v := f.get(label)
				hf, ok := d.mapping(v, p, hardwareKeys, nil)
				if !ok {
					continue
				}
				before := len(d.errs)
				d.require(hf, f.keyNode(label), p, hardwareKeys...)
				var h Hardware
				if x := hf.get("available-cpu-dram-mib"); x != nil {
					if mib, ok := d.integer(x, joinPath(p, "available-cpu-dram-mib")); ok {
						if mib <= 0 {
							d.errAt(x, joinPath(p, "available-cpu-dram-mib"), "must be > 0, got %d", mib)
						}
						h.AvailableCPUDRAMMiB = mib
					}
				}
				if x := hf.get("gpus-per-node"); x != nil {
					h.GPUsPerNode, _ = d.intMin(x, joinPath(p, "gpus-per-node"), 1)
				}
				if len(d.errs) == before {
					r.Hardware[label] = h
					r.HardwareOrder = append(r.HardwareOrder, label)
					r.HardwarePos[label] = d.pos(f.keyNode(label))
				}
			}
		}
	}
	return r
}

// GPUOfRunner derives the GPU model from a runner label or name:
// "cluster:mi325x-amds" and "mi325x-amds_03" both give "mi325x".
func GPUOfRunner(runner string) string {
	r := strings.TrimPrefix(runner, "cluster:")
	r, _, _ = strings.Cut(r, "_")
	r, _, _ = strings.Cut(r, "-")
	return r
}
