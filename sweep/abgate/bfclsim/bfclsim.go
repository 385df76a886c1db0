// Package bfclsim is a stand-in for "bfcl generate" + "bfcl evaluate": it
// writes result and score files in BFCL v4's real layout from a seeded
// per-case model of a serving arm, so the A/B gate runs end to end
// without a model:
//
//	arm := bfclsim.Arm{Model: "Org/M-FC", Seed: 7, Accuracy: 0.85, Drop: 0.04}
//	err := bfclsim.Write(root, arm, categories, replicate) // both files at once
//	rep, err := abgate.Compare(ctx, abgate.Options{A: ..., B: ...})
//
// or as the two bfcl stages against a running server (what `sweep sim-bfcl`
// runs in place of the bfcl program, configured by Arm.Env):
//
//	answered, err := bfclsim.Generate(ctx, root, baseURL, arm, categories, replicate) // result files
//	err = bfclsim.Evaluate(root, arm, categories, replicate)                // score files
//
// Each case is easy (passes with probability 1−Flip) or hard (passes with
// probability Flip), decided by a draw shared by every arm of one Seed, so
// two arms differ only by Drop, Gain and per-run noise. Drop turns that
// share of all cases from easy to hard in this arm, Gain from hard to
// easy. Generate asks the server one chat completion per category; a
// category whose request fails is written as "Error during inference"
// rows, as bfcl writes a failed generation.
package bfclsim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sweep/internal/atomicfile"
	"sweep/internal/simproto"
	"sweep/sweep/abgate"
)

// Arm is the per-case model of one serving arm.
type Arm struct {
	Model string `json:"model"`
	// Seed picks the cases' difficulty; arms compared with each other
	// share it.
	Seed uint64 `json:"seed"`
	// Name separates the per-run noise of arms ("a", "b").
	Name string `json:"name"`
	// Accuracy is the share of easy cases (e.g. 0.85).
	Accuracy float64 `json:"accuracy"`
	// Flip is the per-run chance that a case's verdict goes against its
	// difficulty (default 0.03).
	Flip float64 `json:"flip,omitempty"`
	// Drop is the share of all cases that are easy for the baseline but
	// hard for this arm: a planted regression of Drop×100 points.
	Drop float64 `json:"drop,omitempty"`
	// Gain is the share of all cases that are hard for the baseline but
	// easy for this arm: a planted improvement of Gain×100 points.
	Gain float64 `json:"gain,omitempty"`
	// InfraErrors is the share of rows written as "Error during
	// inference".
	InfraErrors float64 `json:"infra_errors,omitempty"`
	// Cases, when positive, caps each category's case count (a partial
	// run).
	Cases int `json:"cases,omitempty"`
	// CategoryOffset plants an accuracy change in points in single
	// categories (live_multiple: -30), in place of Drop and Gain there.
	CategoryOffset map[string]float64 `json:"category_offset,omitempty"`
}

// WithOffset returns arm with a planted accuracy change of points (−4:
// four points worse): a Drop for a negative offset, a Gain for a positive
// one.
func (arm Arm) WithOffset(points float64) Arm {
	arm.Drop, arm.Gain = 0, 0
	switch {
	case points < 0:
		arm.Drop = -points / 100
	case points > 0:
		arm.Gain = points / 100
	}
	return arm
}

// envConfig is what simproto.EnvBFCL holds.
type envConfig struct {
	Arm       Arm `json:"arm"`
	Replicate int `json:"replicate"`
}

// Env returns the environment that makes `sweep sim-bfcl` play replicate
// rep of arm.
func (arm Arm) Env(rep int) map[string]string {
	b, _ := json.Marshal(envConfig{Arm: arm, Replicate: rep}) // plain fields: cannot fail
	return map[string]string{simproto.EnvBFCL: string(b)}
}

// FromEnv reads the arm and replicate Env wrote.
func FromEnv(value string) (Arm, int, error) {
	if value == "" {
		return Arm{}, 0, fmt.Errorf("%s is not set: the stand-in needs the arm's case model (set by sweep ab run --simulate)", simproto.EnvBFCL)
	}
	var c envConfig
	dec := json.NewDecoder(strings.NewReader(value))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Arm{}, 0, fmt.Errorf("%s: %w", simproto.EnvBFCL, err)
	}
	if c.Arm.Model == "" || !(c.Arm.Accuracy > 0 && c.Arm.Accuracy < 1) {
		return Arm{}, 0, fmt.Errorf("%s: want a model and an accuracy in (0, 1), got %q and %g", simproto.EnvBFCL, c.Arm.Model, c.Arm.Accuracy)
	}
	return c.Arm, c.Replicate, nil
}

// Write writes replicate rep of arm for every category under root (a
// BFCL_PROJECT_ROOT), as bfcl generate and bfcl evaluate would, without a
// server.
func Write(root string, arm Arm, cats []abgate.Category, rep int) error {
	for _, c := range cats {
		if err := writeResult(root, arm, c, rep, nil); err != nil {
			return err
		}
	}
	return Evaluate(root, arm, cats, rep)
}

// Generate is the stand-in for "bfcl generate": for each category it asks
// the server at baseURL (its OpenAI base, ".../v1") one chat completion,
// then writes the category's result file. A failed request makes every row
// of the category an "Error during inference" row. answered counts the
// categories whose request the server answered.
func Generate(ctx context.Context, root, baseURL string, arm Arm, cats []abgate.Category, rep int) (answered int, err error) {
	client := &http.Client{Timeout: 60 * time.Second}
	model, modelErr := servedModel(ctx, client, baseURL)
	for _, c := range cats {
		if err := ctx.Err(); err != nil {
			return answered, err
		}
		reqErr := modelErr
		if reqErr == nil {
			reqErr = ask(ctx, client, baseURL, model, c.Name)
		}
		if reqErr == nil {
			answered++
		}
		if err := writeResult(root, arm, c, rep, reqErr); err != nil {
			return answered, err
		}
	}
	return answered, nil
}

// Evaluate is the stand-in for "bfcl evaluate": it reads each category's
// result file and writes its score file, failing the infrastructure-error
// rows and the cases the arm's model fails. A category without a result
// file is skipped, as bfcl skips it.
func Evaluate(root string, arm Arm, cats []abgate.Category, rep int) error {
	for _, c := range cats {
		if err := writeScore(root, arm, c, rep); err != nil {
			return err
		}
	}
	return nil
}

// verdicts draws the per-case outcomes of one (arm, category, replicate):
// pass[i] before infrastructure errors, infra[i] for the rows written as
// errors. The draws do not depend on the server, so Generate and Evaluate
// agree.
func verdicts(arm Arm, c abgate.Category, rep int) (n int, pass, infra []bool) {
	if off, ok := arm.CategoryOffset[c.Name]; ok {
		arm = arm.WithOffset(off)
	}
	n = c.Size
	if arm.Cases > 0 && arm.Cases < n {
		n = arm.Cases
	}
	flip := arm.Flip
	if flip == 0 {
		flip = 0.03
	}
	shared := rand.New(rand.NewPCG(arm.Seed, hash(c.Name)))
	noise := rand.New(rand.NewPCG(arm.Seed^hash(arm.Name), hash(fmt.Sprintf("%s/%d", c.Name, rep))))
	pass, infra = make([]bool, n), make([]bool, n)
	for i := range n {
		u, v := shared.Float64(), shared.Float64()
		easy := u < arm.Accuracy
		switch {
		case easy && arm.Drop > 0:
			easy = !(v < arm.Drop/arm.Accuracy)
		case !easy && arm.Gain > 0:
			easy = v < arm.Gain/(1-arm.Accuracy)
		}
		pass[i] = easy != (noise.Float64() < flip)
		infra[i] = noise.Float64() < arm.InfraErrors
	}
	return n, pass, infra
}

func caseID(c abgate.Category, i int) string { return fmt.Sprintf("%s_%d", c.Name, i) }

func writeResult(root string, arm Arm, c abgate.Category, rep int, reqErr error) error {
	n, _, infra := verdicts(arm, c, rep)
	var res bytes.Buffer
	for i := range n {
		row := map[string]any{"id": caseID(c, i), "result": []map[string]string{{"f": "{}"}}}
		switch {
		case reqErr != nil:
			row["result"] = abgate.InfraErrorPrefix + ": " + reqErr.Error()
		case infra[i]:
			row["result"] = abgate.InfraErrorPrefix + ": Error code: 503"
		}
		line, err := json.Marshal(row)
		if err != nil {
			return err
		}
		res.Write(append(line, '\n'))
	}
	return writeFile(root, abgate.ResultPath(arm.Model, c), res.Bytes())
}

func writeScore(root string, arm Arm, c abgate.Category, rep int) error {
	rows, err := readResultRows(filepath.Join(root, filepath.FromSlash(abgate.ResultPath(arm.Model, c))))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	n, pass, _ := verdicts(arm, c, rep)
	var fails bytes.Buffer
	correct := 0
	for _, r := range rows {
		i := -1
		if s, ok := strings.CutPrefix(r.ID, c.Name+"_"); ok {
			if _, err := fmt.Sscanf(s, "%d", &i); err != nil || i >= n {
				i = -1
			}
		}
		errored := false
		if s, ok := r.Result.(string); ok && strings.HasPrefix(s, abgate.InfraErrorPrefix) {
			errored = true
		}
		if i >= 0 && pass[i] && !errored {
			correct++
			continue
		}
		row, err := json.Marshal(map[string]any{"id": r.ID, "model_name": abgate.ModelDir(arm.Model), "test_category": c.Name,
			"valid": false, "error": []string{"simulated failure"}, "error_type": "simulated:wrong_value"})
		if err != nil {
			return err
		}
		fails.Write(append(row, '\n'))
	}
	acc := 0.0
	if len(rows) > 0 {
		acc = float64(correct) / float64(len(rows))
	}
	header, err := json.Marshal(map[string]any{"accuracy": acc, "correct_count": correct, "total_count": len(rows)})
	if err != nil {
		return err
	}
	return writeFile(root, abgate.ScorePath(arm.Model, c), append(append(header, '\n'), fails.Bytes()...))
}

type resultRow struct {
	ID     string `json:"id"`
	Result any    `json:"result"`
}

func readResultRows(file string) ([]resultRow, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []resultRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var r resultRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		rows = append(rows, r)
	}
	return rows, sc.Err()
}

func writeFile(root, rel string, data []byte) error {
	file := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(file, data, 0o644)
}

// servedModel is the first model the server lists on /v1/models.
func servedModel(ctx context.Context, c *http.Client, baseURL string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(baseURL, "/")+"/models", nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: HTTP %s", req.URL, resp.Status)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil || len(list.Data) == 0 {
		return "", fmt.Errorf("GET %s: no model listed", req.URL)
	}
	return list.Data[0].ID, nil
}

// ask sends one short chat completion, as bfcl's OpenAI handler would for
// a case of category.
func ask(ctx context.Context, c *http.Client, baseURL, model, category string) error {
	body, err := json.Marshal(map[string]any{
		"model":       model,
		"messages":    []map[string]string{{"role": "user", "content": "BFCL " + category + ": call the right function."}},
		"temperature": 0,
		"max_tokens":  8,
		"store":       false,
	})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(baseURL, "/")+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("Error code: %d", resp.StatusCode)
	}
	return nil
}

func hash(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return h.Sum64()
}
