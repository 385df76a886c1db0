package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"

	"sweep/internal/inputfile"
)

// readOnlineRunners reads runner names from a JSON list or one per line.
func readOnlineRunners(path string) (map[string]bool, error) {
	data, err := inputfile.Read(path, inputfile.SmallJSON)
	if err != nil {
		return nil, fmt.Errorf("--online-runners: %w", err)
	}
	out := map[string]bool{}
	if t := strings.TrimSpace(string(data)); strings.HasPrefix(t, "[") {
		var names []string
		if err := json.Unmarshal(data, &names); err != nil {
			return nil, fmt.Errorf("--online-runners %s: want a JSON list of runner names: %w", path, err)
		}
		for _, n := range names {
			out[n] = true
		}
		return out, nil
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		if n := strings.TrimSpace(sc.Text()); n != "" && !strings.HasPrefix(n, "#") {
			out[n] = true
		}
	}
	return out, sc.Err()
}
