package run

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// maxModelsBody bounds the /v1/models answer read by checkServedModel.
const maxModelsBody = 1 << 20

// ServedModels returns the names an engine command line serves its model
// under, as SGLang and vLLM answer them on /v1/models: the values of
// --served-model-name, else the model (SGLang --model-path or --model,
// vLLM `serve MODEL` or --model). It returns nil when the argv names no
// model (the check is then skipped).
func ServedModels(argv []string) []string {
	var served []string
	model := ""
	for i := 0; i < len(argv); i++ {
		name, value, inline := strings.Cut(argv[i], "=")
		switch name {
		case "--served-model-name":
			if inline {
				served = append(served, value)
				continue
			}
			for i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") { // nargs '+' in vLLM
				i++
				served = append(served, argv[i])
			}
		case "--model-path", "--model":
			if inline {
				model = value
			} else if i+1 < len(argv) {
				i++
				model = argv[i]
			}
		case "serve":
			if !inline && model == "" && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
				i++
				model = argv[i]
			}
		}
	}
	if len(served) > 0 {
		return served
	}
	if model != "" {
		return []string{model}
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
