package configs

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Thinking modes of a golden acceptance-length curve.
const (
	ThinkingOn  = "thinking_on"
	ThinkingOff = "thinking_off"
)

// GoldenAL holds golden acceptance-length (AL) curves: for each curve file
// (e.g. qwen3.5_mtp), model -> thinking mode -> number of speculative
// tokens -> AL. Two files may describe the same model (different drafters
// or sampling methods), so curves are addressed by file name first.
type GoldenAL struct {
	Sets []*GoldenALSet // sorted by Name
}

// GoldenALSet is the content of one golden AL file.
type GoldenALSet struct {
	Name   string // file name without .yaml, e.g. qwen3.5_mtp
	File   string // file the set came from
	Models map[string]map[string]map[int]float64
	// ModelOrder lists the models in file order.
	ModelOrder []string
}

// Set returns the curve file called name (file name without .yaml).
func (g *GoldenAL) Set(name string) (*GoldenALSet, bool) {
	i := slices.IndexFunc(g.Sets, func(s *GoldenALSet) bool { return s.Name == name })
	if i < 0 {
		return nil, false
	}
	return g.Sets[i], true
}

// AL returns the golden AL of model in thinking mode (ThinkingOn or
// ThinkingOff) with numSpecTokens speculative tokens.
func (s *GoldenALSet) AL(model, thinking string, numSpecTokens int) (float64, bool) {
	al, ok := s.Models[model][thinking][numSpecTokens]
	return al, ok
}

// LoadGoldenAL reads every *.yaml file of dir in fsys as a golden AL curve
// file: model -> thinking_on|thinking_off -> num speculative tokens (>= 1)
// -> AL (>= 1). Every problem is reported (errors.Join of *Error).
func LoadGoldenAL(fsys fs.FS, dir string) (*GoldenAL, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("golden AL: no *.yaml files in %s", dir)
	}
	slices.Sort(names)
	g := &GoldenAL{}
	var errs []*Error
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			errs = append(errs, &Error{File: name, Line: 1, Col: 1, Msg: fmt.Sprintf("cannot read golden AL file: %v", err)})
			continue
		}
		d := &decoder{file: name}
		if set := d.goldenAL(data); set != nil && len(d.errs) == 0 {
			set.Name = strings.TrimSuffix(path.Base(name), ".yaml")
			set.File = name
			g.Sets = append(g.Sets, set)
		}
		errs = append(errs, d.errs...)
	}
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	return g, nil
}

func (d *decoder) goldenAL(data []byte) *GoldenALSet {
	root := d.parseDocument(data)
	if root == nil {
		if len(d.errs) == 0 {
			d.errAt(nil, "", "golden AL file is empty; it must map model -> thinking_on|thinking_off -> num speculative tokens -> AL")
		}
		return nil
	}
	models, ok := d.mapping(root, "", nil, nil)
	if !ok {
		return nil
	}
	set := &GoldenALSet{Models: map[string]map[string]map[int]float64{}}
	for _, model := range models.order {
		modes, ok := d.mapping(models.get(model), model, []string{ThinkingOn, ThinkingOff}, nil)
		if !ok {
			continue
		}
		set.Models[model] = map[string]map[int]float64{}
		set.ModelOrder = append(set.ModelOrder, model)
		for _, mode := range modes.order {
			p := joinPath(model, mode)
			curveN := resolve(modes.get(mode))
			if curveN.Kind != yaml.MappingNode {
				d.errAt(curveN, p, "must map num speculative tokens to AL, got %s", kindName(curveN))
				continue
			}
			curve := map[int]float64{}
			seen := map[int]int{}
			for i := 0; i+1 < len(curveN.Content); i += 2 {
				kn, vn := resolve(curveN.Content[i]), curveN.Content[i+1]
				n, ok := d.intMin(kn, p, 1)
				if !ok {
					continue
				}
				if line, dup := seen[n]; dup {
					d.errAt(kn, fmt.Sprintf("%s.%d", p, n), "duplicate key (first defined at line %d)", line)
					continue
				}
				seen[n] = kn.Line
				al, ok := d.number(vn, fmt.Sprintf("%s.%d", p, n))
				if !ok {
					continue
				}
				if al < 1 {
					d.errAt(vn, fmt.Sprintf("%s.%d", p, n), "acceptance length must be >= 1 (one accepted token per step at least), got %v", al)
					continue
				}
				curve[n] = al
			}
			set.Models[model][mode] = curve
		}
	}
	return set
}
