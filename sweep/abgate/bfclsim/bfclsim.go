// Package bfclsim is a stand-in for "bfcl generate" + "bfcl evaluate": it
// writes result and score files in BFCL v4's real layout from a seeded
// per-case model of a serving arm, so the A/B gate runs end to end
// without a model server:
//
//	arm := bfclsim.Arm{Model: "Org/M-FC", Seed: 7, Accuracy: 0.85, Drop: 0.04}
//	err := bfclsim.Write(root, arm, categories, replicate)
//	rep, err := abgate.Compare(ctx, abgate.Options{A: ..., B: ...})
//
// Each case is easy (passes with probability 1−Flip) or hard (passes with
// probability Flip), decided by a draw shared by every arm of one Seed, so
// two arms differ only by Drop and by per-run noise. Drop turns that share
// of the category's cases from easy to hard in this arm.
package bfclsim

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"sweep/internal/atomicfile"
	"sweep/sweep/abgate"
)

// Arm is the per-case model of one serving arm.
type Arm struct {
	Model string
	// Seed picks the cases' difficulty; arms compared with each other
	// share it.
	Seed uint64
	// Name separates the per-run noise of arms ("a", "b").
	Name string
	// Accuracy is the share of easy cases (e.g. 0.85).
	Accuracy float64
	// Flip is the per-run chance that a case's verdict goes against its
	// difficulty (default 0.03).
	Flip float64
	// Drop is the share of all cases that are easy for the baseline but
	// hard for this arm: a planted regression of Drop×100 points.
	Drop float64
	// InfraErrors is the share of rows written as "Error during
	// inference".
	InfraErrors float64
	// Cases, when positive, caps each category's case count (a partial
	// run).
	Cases int
}

// Write writes replicate rep of arm for every category under root (a
// BFCL_PROJECT_ROOT), as bfcl generate and bfcl evaluate would.
func Write(root string, arm Arm, cats []abgate.Category, rep int) error {
	if arm.Flip == 0 {
		arm.Flip = 0.03
	}
	for _, c := range cats {
		if err := writeCategory(root, arm, c, rep); err != nil {
			return err
		}
	}
	return nil
}

func writeCategory(root string, arm Arm, c abgate.Category, rep int) error {
	n := c.Size
	if arm.Cases > 0 && arm.Cases < n {
		n = arm.Cases
	}
	shared := rand.New(rand.NewPCG(arm.Seed, hash(c.Name)))
	noise := rand.New(rand.NewPCG(arm.Seed^hash(arm.Name), hash(fmt.Sprintf("%s/%d", c.Name, rep))))
	var res, fails strings.Builder
	correct := 0
	for i := range n {
		id := fmt.Sprintf("%s_%d", c.Name, i)
		u, v := shared.Float64(), shared.Float64()
		easy := u < arm.Accuracy && !(v < arm.Drop/arm.Accuracy)
		pass := easy != (noise.Float64() < arm.Flip)
		if noise.Float64() < arm.InfraErrors {
			line, _ := json.Marshal(map[string]any{"id": id, "result": abgate.InfraErrorPrefix + ": Error code: 503"})
			res.Write(append(line, '\n'))
			pass = false
		} else {
			line, _ := json.Marshal(map[string]any{"id": id, "result": []map[string]string{{"f": "{}"}}})
			res.Write(append(line, '\n'))
		}
		if pass {
			correct++
			continue
		}
		row, _ := json.Marshal(map[string]any{"id": id, "model_name": abgate.ModelDir(arm.Model), "test_category": c.Name,
			"valid": false, "error": []string{"simulated failure"}, "error_type": "simulated:wrong_value"})
		fails.Write(append(row, '\n'))
	}
	header, _ := json.Marshal(map[string]any{"accuracy": float64(correct) / float64(n), "correct_count": correct, "total_count": n})
	for rel, data := range map[string]string{
		abgate.ResultPath(arm.Model, c): res.String(),
		abgate.ScorePath(arm.Model, c):  string(header) + "\n" + fails.String(),
	} {
		file := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return err
		}
		if err := atomicfile.Write(file, []byte(data), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func hash(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return h.Sum64()
}
