package run

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"time"

	"sweep/recipes/schema"
)

// maxModelsBody bounds the /v1/models answer read by checkServedModel.
const maxModelsBody = 1 << 20

// ServedModels returns the names an engine command line serves its model
// under, as SGLang and vLLM answer them on /v1/models: the values of
// --served-model-name, else the model (SGLang --model-path or --model,
// vLLM `serve MODEL` or --model), the argv read with the schema of its
// program (schema.OfProgram: vLLM's --served-model-name takes several
// names). It returns nil when the argv names no model (the check is then
// skipped).
func ServedModels(argv []string) []string {
	a := schema.ReadArgv(argv, schema.ArgvOptions{Schema: schema.OfProgram(argv)})
	if f, ok := a.Find("--served-model-name"); ok && len(f.Values) > 0 {
		return slices.Clone(f.Values)
	}
	for _, name := range []string{"--model-path", "--model"} {
		if f, ok := a.Find(name); ok && f.Value() != "" {
			return []string{f.Value()}
		}
	}
	// vLLM's model tag: the positional after its serve command.
	for j, i := range a.Positionals {
		if a.Tokens[i] == "serve" && j+1 < len(a.Positionals) && a.Positionals[j+1] == i+1 {
			return []string{a.Tokens[i+1]}
		}
	}
	return nil
}

// modelsURL is the /v1/models URL beside a health URL.
func modelsURL(healthURL string) (string, error) {
	u, err := url.Parse(healthURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("health URL %q has no host", healthURL)
	}
	u.Path, u.RawQuery = "/v1/models", ""
	return u.String(), nil
}

// checkServedModel confirms that the server answering healthURL is the one
// started: its /v1/models must list one of want. A foreign server that
// took the port (or answered before ours bound it) fails here instead of
// feeding the point its numbers.
func checkServedModel(ctx context.Context, healthURL string, want []string) error {
	u, err := modelsURL(healthURL)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("cannot confirm the server on %s is ours: GET %s: %w", healthURL, u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the server answering %s is not ours: GET %s gave HTTP %s, but SGLang and vLLM serve the model list there (is another server using the port?)", healthURL, u, resp.Status)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxModelsBody)).Decode(&list); err != nil {
		return fmt.Errorf("the server answering %s is not ours: GET %s is not an OpenAI model list: %w", healthURL, u, err)
	}
	var got []string
	for _, m := range list.Data {
		if slices.Contains(want, m.ID) {
			return nil
		}
		got = append(got, m.ID)
	}
	return fmt.Errorf("the server answering %s is not ours: it serves %q, the engine was started to serve %q (is another server using the port?)", healthURL, got, want)
}
