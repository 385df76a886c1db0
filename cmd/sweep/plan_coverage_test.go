package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/recipes"
)

func TestPlanCoverage(t *testing.T) {
	t.Run("flag makes --config-keys optional", func(t *testing.T) {
		o, err := parseOptions(t, newPlanCmd, "--coverage")
		require.NoError(t, err)
		assert.True(t, o.Coverage)
		assert.Empty(t, o.ConfigKeys)
	})
	t.Run("text table of every key", func(t *testing.T) {
		var out bytes.Buffer
		require.NoError(t, planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &out}, Coverage: true, Format: "text"}))
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		require.Greater(t, len(lines), 3)
		assert.Regexp(t, `^KEY\s+STATUS\s+POINTS\s+REASON$`, lines[0])
		row := func(key string) string {
			for _, l := range lines {
				if strings.HasPrefix(l, key+" ") {
					return l
				}
			}
			t.Fatalf("no row for %s in\n%s", key, out.String())
			return ""
		}
		assert.Regexp(t, `^qwen3.5-fp8-b200-sglang-agentic-mtp\s+planned\s+33\s*$`, row("qwen3.5-fp8-b200-sglang-agentic-mtp"))
		assert.Regexp(t, `^minimaxm3-fp4-b200-trtllm-agentic-mtp\s+unsupported\s+11\s+not supported yet: engine TRT-LLM`, row("minimaxm3-fp4-b200-trtllm-agentic-mtp"))
		assert.Regexp(t, `^kimik3-fp4-h200-vllm-agentic\s+planned\s+35\s*$`, row("kimik3-fp4-h200-vllm-agentic"))
		assert.Regexp(t, `^dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp\s+planned\s+12\s*$`, row("dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp"))
		// The summary counts agree with the table.
		summary := regexp.MustCompile(`^(\d+) agentic keys: (\d+) planned, (\d+) unsupported, (\d+) failing; (\d+) other keys`).FindStringSubmatch(lines[len(lines)-1])
		require.NotNil(t, summary, lines[len(lines)-1])
		count := func(status string) int {
			n := 0
			for _, l := range lines[1 : len(lines)-2] {
				if f := strings.Fields(l); len(f) > 1 && f[1] == status {
					n++
				}
			}
			return n
		}
		assert.Equal(t, summary[2], strconv.Itoa(count("planned")))
		assert.Equal(t, summary[3], strconv.Itoa(count("unsupported")))
		assert.Equal(t, summary[4], strconv.Itoa(count("failing")))
	})
	t.Run("json for a pattern", func(t *testing.T) {
		var out bytes.Buffer
		require.NoError(t, planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &out}, Coverage: true, ConfigKeys: []string{"minimaxm3-fp8-h*"}, Format: "json"}))
		var cov []recipes.KeyCoverage
		require.NoError(t, json.Unmarshal(out.Bytes(), &cov))
		assert.Equal(t, []recipes.KeyCoverage{
			{Key: "minimaxm3-fp8-h100-vllm-agentic-mtp", Status: recipes.Planned, Points: 7},
			{Key: "minimaxm3-fp8-h200-vllm-agentic-mtp", Status: recipes.Planned, Points: 8},
		}, cov)
	})
}
