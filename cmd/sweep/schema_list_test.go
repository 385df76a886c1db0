package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/recipes/schema"
)

func TestSchemaList(t *testing.T) {
	code, out, errOut := runCLI(t, "schema", "list")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "TOOL     VERSION               DEFAULT  FLAGS  SPELLINGS")
	assert.Regexp(t, `aiperf\s+0\.12\.0\s+yes\s+259\s+316\s+\d+\s+inferencex-agentx-mvp\s+complete`, out)
	assert.Regexp(t, `aiperf\s+sa-754356e9\s+263`, out)
	assert.Regexp(t, `lmcache\s+0\.5\.3\s+yes\s+11\s+11\s+2\s+-\s+partial`, out)
	assert.Regexp(t, `sglang\s+v0\.5\.17\s+yes`, out)
	assert.Regexp(t, `smg\s+v1\.9\.0-193-gf8daa883\s+yes\s+152\s+159\s+0\s+-\s+complete`, out)
	assert.Regexp(t, `vllm\s+v0\.27\.1\s+yes`, out)

	code, out, _ = runCLI(t, "schema", "list", "--json")
	require.Equal(t, 0, code)
	var rows []schema.Summary
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	assert.Len(t, rows, 7)
}
